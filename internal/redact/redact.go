// Package redact removes secrets from everything the runner writes:
// transcripts, the run record, the log issue, comments and step summaries.
package redact

import (
	"regexp"
	"strings"
)

// rule is one secret shape and the label that replaces it.
type rule struct {
	label string
	re    *regexp.Regexp
	// hint is a cheap substring test so clean text skips the regexp.
	hint []string
}

var rules = []rule{
	{"github-token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,255}\b`), []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_"}},
	{"github-token", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,255}\b`), []string{"github_pat_"}},
	{"anthropic-key", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{10,}`), []string{"sk-ant-"}},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`), []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"}},
	// A secret access key is 40 base64 characters; only redact it next to a
	// name that says what it is, or every long hash would go.
	{"aws-secret-key", regexp.MustCompile(`(?i)(aws_?secret_?access_?key|secret_?access_?key|aws_?secret)(["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}\b`), []string{"secret", "SECRET", "Secret"}},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`), []string{"eyJ"}},
	{"bearer-token", regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|token)\s+)[A-Za-z0-9_\-\.=]{20,}`), []string{"uthorization", "UTHORIZATION"}},
}

// String returns s with every secret replaced by [REDACTED:<kind>]. A
// secret split by invisible characters (zero-width space, word joiner, soft
// hyphen, bidi controls…) still reads as the secret on GitHub, so when s has
// any, they are dropped before matching wherever that uncovers a secret.
func String(s string) string {
	out := redact(s)
	if strings.IndexFunc(s, invisible) < 0 {
		return out
	}
	if vis := redact(strings.Map(dropInvisible, s)); vis != strings.Map(dropInvisible, s) {
		return vis
	}
	return out
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

func dropInvisible(r rune) rune {
	if invisible(r) {
		return -1
	}
	return r
}

func redact(s string) string {
	for _, r := range rules {
		if !containsAny(s, r.hint) {
			continue
		}
		switch r.label {
		case "aws-secret-key", "bearer-token":
			// keep the name and separator so the text still reads
			s = r.re.ReplaceAllString(s, "${1}${2}[REDACTED:"+r.label+"]")
		default:
			s = r.re.ReplaceAllString(s, "[REDACTED:"+r.label+"]")
		}
	}
	return s
}

// Bytes is String for byte slices.
func Bytes(b []byte) []byte { return []byte(String(string(b))) }

// Contains reports whether s holds anything String would redact.
func Contains(s string) bool { return String(s) != s }

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
