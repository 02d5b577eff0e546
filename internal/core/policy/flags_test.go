package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func intp(n int) *int { return &n }

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Flags
	}{
		{"comment-only", "comment-only", Flags{CommentOnly: true}},
		{"here-only", "here-only", Flags{HereOnly: true}},
		{"no-issue", "no-issue", Flags{NoIssue: true}},
		{"no-pr", "no-pr", Flags{NoPR: true}},
		{"repo", "repo=foo/bar", Flags{AllowRepos: []string{"foo/bar"}}},
		{"deny", "deny=foo/bar", Flags{DenyRepos: []string{"foo/bar"}}},
		{"issue-limit", "issue-limit=2", Flags{IssueLimit: intp(2)}},
		{"pr-limit", "pr-limit=0", Flags{PRLimit: intp(0)}},
		{"comment-limit", "comment-limit=1000", Flags{CommentLimit: intp(1000)}},
		{"spec example 1", "comment-only here-only", Flags{CommentOnly: true, HereOnly: true}},
		{"spec example 2", "repo=foo/bar pr-limit=0", Flags{AllowRepos: []string{"foo/bar"}, PRLimit: intp(0)}},
		{"repos lower-cased sorted deduped", "repo=Zed/X repo=foo/Bar repo=FOO/bar", Flags{AllowRepos: []string{"foo/bar", "zed/x"}}},
		{"deny lower-cased", "deny=Octo/Hello.World", Flags{DenyRepos: []string{"octo/hello.world"}}},
		{"repeated limit takes minimum", "issue-limit=5 issue-limit=2 issue-limit=3", Flags{IssueLimit: intp(2)}},
		{"repeated boolean is harmless", "no-pr no-pr", Flags{NoPR: true}},
		{"flag names fold ASCII case", "Comment-Only NO-PR Repo=a/b", Flags{CommentOnly: true, NoPR: true, AllowRepos: []string{"a/b"}}},
		{"extra whitespace", "  comment-only\t\tno-issue  ", Flags{CommentOnly: true, NoIssue: true}},
		{"zero", "comment-limit=0", Flags{CommentLimit: intp(0)}},
		{"all", "comment-only here-only no-issue no-pr repo=a/b deny=c/d issue-limit=1 pr-limit=2 comment-limit=3",
			Flags{true, true, true, true, []string{"a/b"}, []string{"c/d"}, intp(1), intp(2), intp(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFlagLine(tt.line)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseFlagsSplitsWords(t *testing.T) {
	got, err := ParseFlags([]string{"comment-only here-only", "", "no-pr"})
	require.NoError(t, err)
	assert.Equal(t, Flags{CommentOnly: true, HereOnly: true, NoPR: true}, got)
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		name  string
		words []string
		kind  ErrorKind
		word  string
		says  string // a piece of the message
	}{
		{"nil", nil, EmptyCfg, "", "empty !cfg"},
		{"blank words", []string{"", "  "}, EmptyCfg, "", "empty !cfg"},
		{"typo", []string{"comment-onyl"}, UnknownFlag, "comment-onyl", `(did you mean comment-only?)`},
		{"typo in value flag", []string{"repos=foo/bar"}, UnknownFlag, "repos=foo/bar", "did you mean repo=<owner/name>?"},
		{"far from anything", []string{"please"}, UnknownFlag, "please", `unknown !cfg flag "please";`},
		{"unicode lookalike", []string{"comment‐only"}, UnknownFlag, "comment‐only", "unknown"},
		{"error stops at first bad word", []string{"no-pr", "bogus", "repo="}, UnknownFlag, "bogus", "bogus"},
		{"repo empty", []string{"repo="}, MalformedValue, "repo=", "repo needs a repository as owner/name"},
		{"repo no value", []string{"repo"}, MalformedValue, "repo", "owner/name"},
		{"repo no slash", []string{"repo=foo"}, MalformedValue, "repo=foo", "owner/name"},
		{"deny no slash", []string{"deny=foo"}, MalformedValue, "deny=foo", "deny needs"},
		{"limit not a number", []string{"issue-limit=x"}, MalformedValue, "issue-limit=x", "whole number"},
		{"limit missing value", []string{"pr-limit"}, MalformedValue, "pr-limit", "whole number"},
		{"limit empty value", []string{"pr-limit="}, MalformedValue, "pr-limit=", "whole number"},
		{"limit negative", []string{"comment-limit=-1"}, MalformedValue, "comment-limit=-1", "without sign"},
		{"limit plus", []string{"comment-limit=+1"}, MalformedValue, "comment-limit=+1", "without sign"},
		{"limit leading zero", []string{"issue-limit=01"}, MalformedValue, "issue-limit=01", "leading zeros"},
		{"limit unicode digit", []string{"issue-limit=١"}, MalformedValue, "issue-limit=١", "whole number"},
		{"limit two equals", []string{"issue-limit=1=2"}, MalformedValue, "issue-limit=1=2", "whole number"},
		{"boolean with value", []string{"comment-only=1"}, MalformedValue, "comment-only=1", "comment-only takes no value"},
		{"boolean with empty value", []string{"no-pr="}, MalformedValue, "no-pr=", "takes no value"},
		{"out of range", []string{"issue-limit=1001"}, OutOfRange, "issue-limit=1001", "n must be 0…1000"},
		{"overflow", []string{"pr-limit=99999999999999999999999"}, OutOfRange, "pr-limit=99999999999999999999999", "out of range"},
		{"bad owner", []string{"repo=-foo/bar"}, BadRepo, "repo=-foo/bar", `invalid repository "-foo/bar"`},
		{"dot dot", []string{"deny=foo/.."}, BadRepo, "deny=foo/..", "invalid repository"},
		{"three parts", []string{"repo=a/b/c"}, BadRepo, "repo=a/b/c", "invalid repository"},
		{"wildcard", []string{"deny=foo/*"}, BadRepo, "deny=foo/*", "invalid repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFlags(tt.words)
			require.Error(t, err)
			assert.Equal(t, Flags{}, got, "no partial flags on error")
			var fe *FlagError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tt.kind, fe.Kind)
			assert.Equal(t, tt.word, fe.Word)
			msg := err.Error()
			assert.Contains(t, msg, tt.says)
			assert.True(t, strings.HasSuffix(msg, "; valid flags: "+validFlagsList), msg)
		})
	}
}

func TestFlagErrorMessage(t *testing.T) {
	err := &FlagError{Kind: UnknownFlag, Word: "comment-onyl"}
	assert.Equal(t, `unknown !cfg flag "comment-onyl" (did you mean comment-only?); valid flags: comment-only, here-only, repo=<owner/name>, deny=<owner/name>, no-issue, no-pr, issue-limit=<n>, pr-limit=<n>, comment-limit=<n> (n = 0…1000)`, err.Error())

	long := &FlagError{Kind: UnknownFlag, Word: strings.Repeat("é", 100)}
	assert.Less(t, len(long.Error()), 400, "long words are shortened")
	assert.Contains(t, long.Error(), "…")
}

func TestFlagsStringRoundTrip(t *testing.T) {
	for _, line := range []string{
		"comment-only",
		"no-pr Here-Only repo=B/b repo=a/A deny=x/y issue-limit=3 issue-limit=1 comment-limit=0",
		"pr-limit=1000",
	} {
		f, err := ParseFlagLine(line)
		require.NoError(t, err)
		back, err := ParseFlagLine(f.String())
		require.NoError(t, err, f.String())
		assert.Equal(t, f, back)
	}
	f, _ := ParseFlagLine("no-pr Here-Only repo=B/b repo=a/A deny=x/y issue-limit=3 issue-limit=1")
	assert.Equal(t, "here-only no-pr repo=a/a repo=b/b deny=x/y issue-limit=1", f.String())
}
