package policy

import "strings"

// valueType says what follows "=" in a flag.
type valueType int

const (
	noValue valueType = iota
	repoValue
	limitValue
)

// flagSpec is the single source for parsing, help text and error messages.
type flagSpec struct {
	name    string
	value   valueType
	meaning string
}

var flagSpecs = []flagSpec{
	{"comment-only", noValue, "only comments may be written (no issues, no PRs, no pushes)"},
	{"here-only", noValue, "only comments on this issue/PR (implies comment-only)"},
	{"repo", repoValue, "only write to this repo; several `repo=` form an allow-list"},
	{"deny", repoValue, "never write to this repo (deny beats allow)"},
	{"no-issue", noValue, "no issue creation"},
	{"no-pr", noValue, "no pull request creation"},
	{"issue-limit", limitValue, "at most n issues created in this run"},
	{"pr-limit", limitValue, "at most n PRs created in this run"},
	{"comment-limit", limitValue, "at most n comments on any one issue/PR in this run"},
}

func lookupFlag(name string) (flagSpec, bool) {
	for _, s := range flagSpecs {
		if s.name == name {
			return s, true
		}
	}
	return flagSpec{}, false
}

// usage is how the flag is written, e.g. "repo=<owner/name>".
func (s flagSpec) usage() string {
	switch s.value {
	case repoValue:
		return s.name + "=<owner/name>"
	case limitValue:
		return s.name + "=<n>"
	}
	return s.name
}

// validFlagsList is the one-line list every FlagError ends with.
var validFlagsList = func() string {
	u := make([]string, len(flagSpecs))
	for i, s := range flagSpecs {
		u[i] = s.usage()
	}
	return strings.Join(u, ", ") + " (n = 0…1000)"
}()

// ValidFlagsHelp is the list of valid flags with one-line meanings, in
// markdown that also reads well as plain text (used in the bot's reply).
func ValidFlagsHelp() string {
	var b strings.Builder
	b.WriteString("Valid `!cfg` flags (they only ever restrict what the bot may write):\n\n")
	for _, s := range flagSpecs {
		b.WriteString("- `" + s.usage() + "` — " + s.meaning + "\n")
	}
	b.WriteString("\n`n` is a whole number 0…1000. Example: `!cfg repo=foo/bar pr-limit=0`\n")
	return b.String()
}

// asciiLower folds only A–Z, so no Unicode case mapping (e.g. the Kelvin
// sign) can turn an odd word into a valid flag name.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
