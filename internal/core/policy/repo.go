package policy

import (
	"slices"
	"strings"
)

// ValidRepo reports whether s is a GitHub "owner/name": owner is 1–39
// letters, digits or single inner hyphens; name is 1–100 of [A-Za-z0-9._-]
// and not "." or "..".
func ValidRepo(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && validOwner(owner) && validName(name)
}

func validOwner(s string) bool {
	if len(s) < 1 || len(s) > 39 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlnum(c):
		case c == '-' && s[i-1] != '-': // never first (checked above), never doubled
		default:
			return false
		}
	}
	return true
}

func validName(s string) bool {
	if len(s) < 1 || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// normRepos lower-cases, sorts and dedupes. It never drops an entry: an
// unmatchable allow entry must keep the allow-list non-empty (fail closed).
func normRepos(in []string) []string {
	out := make([]string, 0, len(in))
	for _, r := range in {
		out = append(out, strings.ToLower(r))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
