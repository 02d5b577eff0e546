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

// String returns s with every secret replaced by [REDACTED:<kind>].
func String(s string) string {
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
