package policy

import (
	"strconv"
	"strings"
)

// Flags are the user's words, parsed. Limits are nil when not given.
// ParseFlags returns them canonical: repos lower-cased, sorted and deduped,
// repeated limits reduced to their minimum.
type Flags struct {
	CommentOnly, HereOnly, NoIssue, NoPR bool
	AllowRepos, DenyRepos                []string
	IssueLimit, PRLimit, CommentLimit    *int
}

// ParseFlagLine parses the rest of the `!cfg` line.
func ParseFlagLine(line string) (Flags, error) {
	return ParseFlags(strings.Fields(line))
}

// ParseFlags parses the raw words after `!cfg`. Flag names are matched
// without regard to ASCII case (phones capitalise the first word); values
// are strict. Any word it cannot read is a *FlagError: a typo must stop the
// run, never widen it.
func ParseFlags(words []string) (Flags, error) {
	var f Flags
	seen := 0
	for _, w := range words {
		for _, tok := range strings.Fields(w) {
			seen++
			if err := f.add(tok); err != nil {
				return Flags{}, err
			}
		}
	}
	if seen == 0 {
		return Flags{}, &FlagError{Kind: EmptyCfg}
	}
	if f.AllowRepos != nil {
		f.AllowRepos = normRepos(f.AllowRepos)
	}
	if f.DenyRepos != nil {
		f.DenyRepos = normRepos(f.DenyRepos)
	}
	return f, nil
}

func (f *Flags) add(word string) error {
	key, val, hasVal := strings.Cut(word, "=")
	spec, ok := lookupFlag(asciiLower(key))
	if !ok {
		return &FlagError{Kind: UnknownFlag, Word: word}
	}
	switch spec.value {
	case noValue:
		if hasVal {
			return &FlagError{Kind: MalformedValue, Word: word}
		}
		switch spec.name {
		case "comment-only":
			f.CommentOnly = true
		case "here-only":
			f.HereOnly = true
		case "no-issue":
			f.NoIssue = true
		case "no-pr":
			f.NoPR = true
		}
	case repoValue:
		if !strings.Contains(val, "/") {
			return &FlagError{Kind: MalformedValue, Word: word}
		}
		if !ValidRepo(val) {
			return &FlagError{Kind: BadRepo, Word: word}
		}
		if spec.name == "repo" {
			f.AllowRepos = append(f.AllowRepos, val)
		} else {
			f.DenyRepos = append(f.DenyRepos, val)
		}
	case limitValue:
		if !hasVal {
			return &FlagError{Kind: MalformedValue, Word: word}
		}
		n, kind := parseLimit(val)
		if kind != "" {
			return &FlagError{Kind: kind, Word: word}
		}
		switch spec.name {
		case "issue-limit":
			f.IssueLimit = minPtr(f.IssueLimit, n)
		case "pr-limit":
			f.PRLimit = minPtr(f.PRLimit, n)
		case "comment-limit":
			f.CommentLimit = minPtr(f.CommentLimit, n)
		}
	}
	return nil
}

// parseLimit reads n: ASCII digits only, no sign, no leading zero ("01" is
// rejected because it may be a typo for 0 or 1 and we never guess).
func parseLimit(s string) (int, ErrorKind) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, MalformedValue
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, MalformedValue
		}
	}
	if len(s) > len(strconv.Itoa(MaxLimit)) { // also keeps Atoi from overflowing
		return 0, OutOfRange
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxLimit {
		return 0, OutOfRange
	}
	return n, ""
}

// minPtr keeps the tighter of a previous limit and n.
func minPtr(prev *int, n int) *int {
	if prev != nil && *prev < n {
		return prev
	}
	return &n
}

// String is the canonical `!cfg` form: ParseFlagLine(f.String()) gives f
// back for any f that ParseFlags returned.
func (f Flags) String() string {
	var w []string
	for _, b := range []struct {
		on   bool
		name string
	}{{f.CommentOnly, "comment-only"}, {f.HereOnly, "here-only"}, {f.NoIssue, "no-issue"}, {f.NoPR, "no-pr"}} {
		if b.on {
			w = append(w, b.name)
		}
	}
	for _, r := range f.AllowRepos {
		w = append(w, "repo="+r)
	}
	for _, r := range f.DenyRepos {
		w = append(w, "deny="+r)
	}
	for _, l := range []struct {
		n    *int
		name string
	}{{f.IssueLimit, "issue-limit"}, {f.PRLimit, "pr-limit"}, {f.CommentLimit, "comment-limit"}} {
		if l.n != nil {
			w = append(w, l.name+"="+strconv.Itoa(*l.n))
		}
	}
	return strings.Join(w, " ")
}
