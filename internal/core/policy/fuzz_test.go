package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var knownErrorKinds = map[ErrorKind]bool{UnknownFlag: true, MalformedValue: true, OutOfRange: true, BadRepo: true, EmptyCfg: true}

// FuzzParseFlags: never panics; a success round-trips through String(); a
// failure is a *FlagError of a known kind whose message lists the flags.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{
		"comment-only here-only",
		"repo=foo/bar pr-limit=0",
		"Comment-Only no-issue no-pr deny=A/B repo=a/b repo=A/b issue-limit=3 issue-limit=1 comment-limit=1000",
		"", "comment-onyl", "repo=", "repo=foo", "issue-limit=x", "comment-only=1",
		"issue-limit=01", "pr-limit=1001", "pr-limit=99999999999999999999", "repo=-a/b", "deny=a/..",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fl, err := ParseFlagLine(line)
		if err != nil {
			var fe *FlagError
			if !errors.As(err, &fe) || !knownErrorKinds[fe.Kind] {
				t.Fatalf("error %v is not a known *FlagError", err)
			}
			if !strings.Contains(err.Error(), validFlagsList) {
				t.Fatalf("message does not list the valid flags: %s", err)
			}
			return
		}
		canon := fl.String()
		back, err := ParseFlagLine(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, line, err)
		}
		if !reflect.DeepEqual(fl, back) {
			t.Fatalf("round trip of %q: %+v != %+v", line, fl, back)
		}
		if back.String() != canon {
			t.Fatalf("String not canonical: %q != %q", back.String(), canon)
		}
		for _, r := range append(append([]string{}, fl.AllowRepos...), fl.DenyRepos...) {
			if !ValidRepo(r) || r != strings.ToLower(r) {
				t.Fatalf("repo %q kept from %q", r, line)
			}
		}
		for _, n := range []*int{fl.IssueLimit, fl.PRLimit, fl.CommentLimit} {
			if n != nil && (*n < 0 || *n > MaxLimit) {
				t.Fatalf("limit %d out of range from %q", *n, line)
			}
		}
	})
}

// FuzzValidRepo: whatever ValidRepo accepts is one slash, ASCII, and no
// longer than GitHub allows.
func FuzzValidRepo(f *testing.F) {
	for _, s := range []string{"foo/bar", "a/..", "-a/b", "a--b/c", "x/" + strings.Repeat("a", 101), "ü/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidRepo(s) {
			return
		}
		owner, name, _ := strings.Cut(s, "/")
		if strings.Contains(name, "/") || len(owner) > 39 || len(name) > 100 || strings.Contains(owner, "--") {
			t.Fatalf("accepted %q", s)
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 || s[i] <= ' ' {
				t.Fatalf("accepted %q", s)
			}
		}
	})
}
