// Package redact removes secrets from everything the runner writes:
// transcripts, the run record, the log issue, comments and step summaries.
package redact

import (
	"regexp"
	"sort"
	"strings"
)

// rule is one secret shape and the label that replaces it.
type rule struct {
	label string
	re    *regexp.Regexp
	// hint is a cheap substring test so clean text skips the regexp.
	hint []string
	// fold: the pattern ignores case, so the hint must too (a hint list of
	// a few casings let "SeCrEt_access_key=…" past the rule).
	fold bool
}

// Token prefixes are matched even when glued to a word ("xghp_…" still
// reads as a token on GitHub), and a token runs to its last token character.
var rules = []rule{
	{"github-token", regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,255}`), []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_"}, false},
	{"github-token", regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,255}`), []string{"github_pat_"}, false},
	{"anthropic-key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{10,}`), []string{"sk-ant-"}, false},
	{"aws-access-key", regexp.MustCompile(`(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`), []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"}, false},
	// A secret access key is 40 base64 characters; only redact it next to a
	// name that says what it is, or every long hash would go.
	{"aws-secret-key", regexp.MustCompile(`(?i)(aws_?secret_?access_?key|secret_?access_?key|aws_?secret)(["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}\b`), []string{"secret"}, true},
	{"jwt", regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`), []string{"eyJ"}, false},
	{"bearer-token", regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|token)\s+)[A-Za-z0-9_\-\.=]{20,}`), []string{"authorization"}, true},
}

// String returns s with every secret replaced by [REDACTED:<kind>]: the
// shapes above, and the exact values registered with AddSecret (raw,
// percent- and base64-encoded). Secrets are matched in what a reader sees
// on GitHub, not only in the raw text: markdown escapes ("ghp\_…"), HTML
// entities ("ghp&#95;…"), inline tags, emphasis and code markers
// ("gh<b>p_</b>…", "gh**p**_…") and invisible characters (zero-width
// space, soft hyphen, bidi controls…) are read through, and all the source
// text that shows the secret is replaced.
func String(s string) string {
	secrets := registered()
	if !hasSplits(s) {
		return replace(s, matches(s, nil, secrets))
	}
	// Most text holds no secret: look at what a reader sees first, and map
	// it back to the source only when something is there to replace.
	if len(matches(viewText(s), nil, secrets)) == 0 {
		return s
	}
	v := newView(s, true)
	return replace(s, matches(v.text, v, secrets))
}

// match is a source range to redact and its label.
type match struct {
	start, end int
	label      string
}

// matches finds the secrets in text (the view of the source when v is not
// nil) and returns them as source ranges, in order, not overlapping.
func matches(text string, v *view, secrets []string) []match {
	var out []match
	add := func(a, b int, label string) {
		if v != nil {
			a, b = v.from[a], v.to[b-1]
		}
		out = append(out, match{a, b, label})
	}
	for _, r := range rules {
		if r.fold && !containsAnyFold(text, r.hint) || !r.fold && !containsAny(text, r.hint) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			a := m[0]
			if len(m) > 2 && m[len(m)-1] >= 0 { // keep the name and separator (the groups) so the text still reads
				a = m[len(m)-1]
			}
			if a < m[1] {
				add(a, m[1], r.label)
			}
		}
	}
	for _, sec := range secrets {
		for i := 0; ; {
			j := strings.Index(text[i:], sec)
			if j < 0 {
				break
			}
			add(i+j, i+j+len(sec), "secret")
			i += j + len(sec)
		}
	}
	if len(out) < 2 {
		return out
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	merged := out[:1]
	for _, m := range out[1:] {
		last := &merged[len(merged)-1]
		if m.start < last.end {
			last.end = max(last.end, m.end)
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

func replace(s string, ms []match) string {
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for _, m := range ms {
		b.WriteString(s[prev:m.start])
		b.WriteString("[REDACTED:" + m.label + "]")
		prev = m.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

// invisible reports characters that render as nothing.
func invisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x180E,
		r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F,
		r == 0x3164, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF, r == 0xFFA0, r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}

// containsAnyFold is containsAny ignoring case as (?i) does (subs are
// lower-case ASCII). (?i) also folds s with ſ (U+017F) and k with the
// Kelvin sign (U+212A): text holding either is always let through.
func containsAnyFold(s string, subs []string) bool {
	if strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a") {
		return true
	}
	for _, sub := range subs {
		lower, upper := sub[0], sub[0]&^0x20
		for i := 0; i+len(sub) <= len(s); i++ {
			if c := s[i]; (c == lower || c == upper) && strings.EqualFold(s[i:i+len(sub)], sub) {
				return true
			}
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
