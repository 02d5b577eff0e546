package policy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCeilingsValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Ceilings
		err  string
	}{
		{"default", DefaultCeilings(), ""},
		{"zero", Ceilings{}, ""},
		{"max", Ceilings{1000, 1000, 1000, 1000, 1000, 1000, true, ""}, ""},
		{"big label-limit", Ceilings{LabelLimit: 1001}, "label-limit=1001"},
		{"negative review-comment-limit", Ceilings{ReviewComments: -1}, "review-comment-limit=-1"},
		{"big max-writes", Ceilings{MaxWrites: 1001}, "max-writes=1001"},
		{"negative comment", Ceilings{CommentLimit: -1}, "comment-limit=-1"},
		{"big issue", Ceilings{IssueLimit: 1001}, "issue-limit=1001"},
		{"big pr", Ceilings{PRLimit: 5000}, "pr-limit=5000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
	assert.Equal(t, Ceilings{CommentLimit: 3, IssueLimit: 1, PRLimit: 1, MaxWrites: 10, LabelLimit: 5, ReviewComments: 30}, DefaultCeilings())
}

func TestEffective(t *testing.T) {
	here := Thread{Repo: "Owner/Name", Number: 12}
	big := Ceilings{CommentLimit: 10, IssueLimit: 5, PRLimit: 4}
	tests := []struct {
		name string
		line string
		c    Ceilings
		want Policy
	}{
		{"ceilings only", "no-pr", big, Policy{IssueLimit: 5, CommentLimit: 10}},
		{"flag below ceiling", "issue-limit=2 comment-limit=1", big, Policy{IssueLimit: 2, PRLimit: 4, CommentLimit: 1}},
		{"flag above ceiling", "issue-limit=900 pr-limit=900 comment-limit=900", DefaultCeilings(), Policy{IssueLimit: 1, PRLimit: 1, CommentLimit: 3, MaxWrites: 10, LabelLimit: 5, ReviewComments: 30}},
		{"no-issue", "no-issue issue-limit=3", big, Policy{PRLimit: 4, CommentLimit: 10}},
		{"comment-only", "comment-only pr-limit=3", big, Policy{CommentOnly: true, CommentLimit: 10}},
		{"here-only implies comment-only", "here-only", big, Policy{CommentOnly: true, HereOnly: true, CommentLimit: 10}},
		{"spec example 1", "comment-only here-only", DefaultCeilings(), Policy{CommentOnly: true, HereOnly: true, CommentLimit: 3, MaxWrites: 10, ReviewComments: 30}},
		{"spec example 2", "repo=foo/bar pr-limit=0", DefaultCeilings(), Policy{AllowRepos: []string{"foo/bar"}, IssueLimit: 1, CommentLimit: 3, MaxWrites: 10, LabelLimit: 5, ReviewComments: 30}},
		{"bad ceilings clamp tighter", "no-pr", Ceilings{CommentLimit: -4, IssueLimit: 99999}, Policy{IssueLimit: 1000}},
		{"control repo and max-writes", "no-pr", Ceilings{CommentLimit: 1, MaxWrites: 4, ControlRepo: "Ops/Control"}, Policy{CommentLimit: 1, MaxWrites: 4, ControlRepo: "ops/control"}},
		{"repos", "repo=B/x repo=a/Y deny=C/z", big, Policy{AllowRepos: []string{"a/y", "b/x"}, DenyRepos: []string{"c/z"}, IssueLimit: 5, PRLimit: 4, CommentLimit: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFlagLine(tt.line)
			require.NoError(t, err)
			got := Effective(f, tt.c, here, nil)
			tt.want.Here = here
			if tt.want.AllowRepos == nil {
				tt.want.AllowRepos = []string{}
			}
			if tt.want.DenyRepos == nil {
				tt.want.DenyRepos = []string{}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEffectiveHandBuiltFlags(t *testing.T) {
	// Flags not from ParseFlags: negative limits and junk repos only tighten.
	p := Effective(Flags{IssueLimit: intp(-3), AllowRepos: []string{""}}, DefaultCeilings(), Thread{}, nil)
	assert.Equal(t, 0, p.IssueLimit)
	d := p.Decide(Action{Kind: KindComment, Repo: "a/b", Number: 1}, nil)
	assert.False(t, d.Allowed)
	assert.Equal(t, RuleRepoNotAllowed, d.Rule)
}

func TestPolicyJSON(t *testing.T) {
	f, err := ParseFlagLine("repo=foo/bar pr-limit=0")
	require.NoError(t, err)
	b, err := json.Marshal(Effective(f, DefaultCeilings(), Thread{"o/n", 1}, fakeBlocker{}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"comment_only":false,"here_only":false,"allow_repos":["foo/bar"],"deny_repos":[],"issue_limit":1,"pr_limit":0,"comment_limit":3,"max_writes":10,"label_limit":5,"review_comment_limit":30,"allow_push":false}`, string(b))
}

func TestHandBuiltPolicyMatchesCase(t *testing.T) {
	// e.g. decoded from JSON written by hand: matching still ignores case.
	p := Policy{DenyRepos: []string{"Foo/Bar"}, AllowRepos: []string{"Foo/Bar", "A/B"}, CommentLimit: 1, MaxWrites: 1}
	assert.Equal(t, RuleRepoDenied, p.Decide(Action{Kind: KindComment, Repo: "foo/bar", Number: 1}, nil).Rule)
	assert.True(t, p.Decide(Action{Kind: KindComment, Repo: "a/b", Number: 1}, nil).Allowed)
	var zero Policy
	assert.Equal(t, RuleMaxWrites, zero.Decide(Action{Kind: KindIssue, Repo: "a/b"}, nil).Rule, "zero Policy allows nothing")
}
