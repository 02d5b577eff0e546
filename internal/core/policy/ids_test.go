package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// TestDecideMatchesIDs: the opt-out list and deny= follow a repository or
// an account through a rename: an entry made under the old name still
// denies the new one when a trusted job resolved the ids (gate and publish
// decide with the same Policy.Apply).
func TestDecideMatchesIDs(t *testing.T) {
	list := &blocklist.List{Entries: []blocklist.Entry{
		{Pattern: "old/repo", ID: 11},  // repository id 11, since renamed
		{Pattern: "oldlogin/*", ID: 7}, // account id 7, since renamed
	}}
	ids := policy.IDs{}
	ids.Set("new/repo", policy.RepoIDs{Repo: 11, Owner: 3})
	ids.Set("newlogin/app", policy.RepoIDs{Repo: 12, Owner: 7})
	ids.Set("acme/renamed", policy.RepoIDs{Repo: 21, Owner: 5})
	ids.Set("acme/was", policy.RepoIDs{Repo: 21, Owner: 5}) // deny=acme/was resolved (redirect) to repository 21
	ids.Set("free/login", policy.RepoIDs{Repo: 31, Owner: 99})

	f, err := policy.ParseFlagLine("deny=acme/was")
	require.NoError(t, err)
	p := policy.Effective(f, policy.DefaultCeilings(), policy.Thread{Repo: "new/repo", Number: 1}, list)
	p.IDs = ids

	cases := []struct {
		name, repo, rule string
	}{
		{"renamed repository keeps its block", "new/repo", policy.RuleRepoBlocked},
		{"renamed account keeps its block", "newlogin/app", policy.RuleRepoBlocked},
		{"old name still blocked by name", "old/repo", policy.RuleRepoBlocked},
		{"deny= follows the rename", "acme/renamed", policy.RuleRepoDenied},
		{"deny= by name", "acme/was", policy.RuleRepoDenied},
		{"another account under a freed name is not blocked by id", "free/login", ""},
		{"unknown ids fall back to names", "someone/else", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := p.Decide(policy.Action{Kind: policy.KindComment, Repo: c.repo, Number: 1}, nil)
			assert.Equal(t, c.rule, d.Rule, d.Reason)
			assert.Equal(t, c.rule == "", d.Allowed, d.Reason)
		})
	}

	p.IDs = nil // without resolved ids, only the names match
	d := p.Decide(policy.Action{Kind: policy.KindComment, Repo: "new/repo", Number: 1}, nil)
	assert.True(t, d.Allowed, "names alone cannot see the rename: %s", d.Reason)
}
