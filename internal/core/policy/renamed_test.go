package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestControlRepoByID: a write to an old name of the control repository
// (GitHub redirects it there) is refused by id, whatever the case.
func TestControlRepoByID(t *testing.T) {
	c := Ceilings{IssueLimit: 5, PRLimit: 5, CommentLimit: 5, MaxWrites: 10, ControlRepo: "ops/control"}
	p := mustPolicy(t, "issue-limit=5", c, nil)
	p.IDs = IDs{}
	p.IDs.Set("ops/control", RepoIDs{Repo: 7, Owner: 1})
	p.IDs.Set("ops/old-control", RepoIDs{Repo: 7, Owner: 1})
	p.IDs.Set("ops/other", RepoIDs{Repo: 8, Owner: 1})
	for _, a := range []Action{comment("ops/old-control", 1), comment("OPS/Old-Control", 1), issue("ops/old-control"), comment("ops/control", 1)} {
		d := p.Decide(a, nil)
		assert.False(t, d.Allowed, a.Repo)
		assert.Equal(t, RuleControlRepo, d.Rule, a.Repo)
	}
	assert.True(t, p.Decide(comment("ops/other", 1), nil).Allowed)
}

// TestCommentLimitByID: two old names of the same repository share one
// comment-limit count per thread.
func TestCommentLimitByID(t *testing.T) {
	c := Ceilings{IssueLimit: 5, PRLimit: 5, CommentLimit: 1, MaxWrites: 10}
	p := mustPolicy(t, "issue-limit=5", c, nil)
	p.IDs = IDs{}
	for _, n := range []string{"acme/widgets", "acme/old1", "acme/old2"} {
		p.IDs.Set(n, RepoIDs{Repo: 42, Owner: 1})
	}
	l := NewLedgerIDs(p.IDs)
	assert.True(t, p.Apply(comment("acme/old1", 3), l).Allowed)
	d := p.Apply(comment("acme/old2", 3), l)
	assert.False(t, d.Allowed)
	assert.Equal(t, RuleCommentLimit, d.Rule)
	assert.False(t, p.Apply(comment("acme/widgets", 3), l).Allowed)
	assert.Equal(t, 1, l.Comments(Thread{Repo: "acme/widgets", Number: 3}))
	assert.True(t, p.Apply(comment("acme/old1", 4), l).Allowed, "another thread")
	l2 := ReplayIDs(p.IDs, []Action{comment("acme/old2", 3)})
	assert.False(t, p.Decide(comment("acme/old1", 3), l2).Allowed)
}
