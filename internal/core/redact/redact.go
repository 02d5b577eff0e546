// Package redact removes secrets from everything the runner writes:
// transcripts, the run record, the log issue, comments and step summaries.
package redact

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// rule is one secret shape and the label that replaces it.
type rule struct {
	label string
	re    *regexp.Regexp
	// may is a cheap test that holds for every text re matches in (it
	// looks for a rare byte of the pattern's literal part, then checks
	// around it), so most text skips the regexp. It may say yes when re
	// finds nothing; it must never say no when re finds something
	// (FuzzMayHolds checks that against the patterns themselves).
	may func(s string) bool
}

// Token prefixes are matched even when glued to a word ("xghp_…" still
// reads as a token on GitHub), and a token runs to its last token character.
// The rules are built on first use: {20,255} expands to hundreds of
// allocations that every process paid at start-up, redacting or not.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{"github-token", regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,255}`), func(s string) bool {
			return anyAt(s, '_', func(i int) bool {
				return i >= 3 && s[i-3] == 'g' && s[i-2] == 'h' && strings.IndexByte("pousr", s[i-1]) >= 0
			})
		}},
		{"github-token", regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,255}`), func(s string) bool {
			return anyAt(s, '_', func(i int) bool { return i >= 10 && s[i-10:i+1] == "github_pat_" })
		}},
		{"anthropic-key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{10,}`), func(s string) bool {
			return anyAt(s, '-', func(i int) bool { return i >= 2 && strings.HasPrefix(s[i-2:], "sk-ant-") })
		}},
		{"aws-access-key", regexp.MustCompile(`(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`), func(s string) bool {
			return anyAt(s, 'A', func(i int) bool {
				if i+4 > len(s) {
					return false
				}
				switch s[i : i+4] {
				case "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA":
					return true
				}
				return false
			})
		}},
		// A secret access key is 40 base64 characters; only redact it next to a
		// name that says what it is, or every long hash would go. The pattern
		// ignores case, so its test must too (a hint list of a few casings let
		// "SeCrEt_access_key=…" past the rule); ':' and '=' are not folded.
		{"aws-secret-key", regexp.MustCompile(`(?i)(aws_?secret_?access_?key|secret_?access_?key|aws_?secret)(["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}\b`), func(s string) bool {
			return strings.ContainsAny(s, ":=") && containsAnyFold(s, []string{"secret"})
		}},
		{"jwt", regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`), func(s string) bool {
			return anyAt(s, 'J', func(i int) bool { return i >= 2 && s[i-2:i] == "ey" })
		}},
		// No other character folds to a letter of "authorization" (only ſ and
		// the Kelvin sign fold to ASCII, to s and k), so the name is 13 ASCII
		// bytes right before the colon.
		{"bearer-token", regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|token)\s+)[A-Za-z0-9_\-\.=]{20,}`), func(s string) bool {
			return anyAt(s, ':', func(i int) bool { return i >= 13 && strings.EqualFold(s[i-13:i], "authorization") })
		}},
	}
})

// anyAt reports whether at holds for some index of the byte c in s.
func anyAt(s string, c byte, at func(i int) bool) bool {
	for off := 0; ; {
		j := strings.IndexByte(s[off:], c)
		if j < 0 {
			return false
		}
		if at(off + j) {
			return true
		}
		off += j + 1
	}
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
	for _, r := range rules() {
		if !r.may(text) {
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
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r >= 0x180B && r <= 0x180F,
		r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F,
		r == 0x3164, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF, r == 0xFFA0, r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}

// containsAnyFold is strings.Contains for any of subs (lower-case ASCII),
// ignoring case as (?i) does. (?i) also folds s with ſ (U+017F) and k
// with the Kelvin sign (U+212A): text holding either is always let through.
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
