package publish

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// TestRecheckMatchesIDs: publish asks GitHub for the ids of every
// repository it is about to write to and of every deny= entry, so a
// renamed or transferred repository or account keeps its opt-out block and
// its deny=, under whatever name the agent uses.
func TestRecheckMatchesIDs(t *testing.T) {
	f := newFixture(t, "deny=acme/was")
	// deny=acme/was: the repository was renamed to acme/other since; GitHub
	// redirects the old name.
	require.NoError(t, f.sim.AddRepoRedirect("acme/was", testOther))
	moved, err := f.sim.AddRepo("acme/moved", false)
	require.NoError(t, err)
	carol := f.sim.AddUser("carol")
	_, err = f.sim.AddRepo("carol/app", false)
	require.NoError(t, err)
	for _, r := range []string{"acme/moved", "carol/app"} {
		f.sim.SetPermission(r, testBot, "write")
	}
	other, err := f.sim.CreateIssue(testOther, "alice", "o", "o")
	require.NoError(t, err)
	mv, err := f.sim.CreateIssue("acme/moved", "alice", "m", "m")
	require.NoError(t, err)
	ca, err := f.sim.CreateIssue("carol/app", "carol", "c", "c")
	require.NoError(t, err)

	// Blocks made under names that are gone now: the repository acme/moved
	// was "acme/before", the account carol was "carol-old".
	store := &blockfile.Store{Client: f.bot, Repo: testControl}
	_, err = store.Update(context.Background(), "block", func(l *blocklist.List) bool {
		l.Entries = append(l.Entries,
			blocklist.Entry{Pattern: "acme/before", ID: moved.ID, By: "x"},
			blocklist.Entry{Pattern: "carol-old/*", ID: carol.ID, By: "carol"})
		return true
	})
	require.NoError(t, err)

	f.add(f.comment(testTarget, f.issue, "fine"))   // 0 allowed
	f.add(f.comment(testOther, other, "renamed"))   // 1 deny=acme/was is this repository
	f.add(f.comment("acme/moved", mv, "renamed"))   // 2 blocked by repository id
	f.add(f.comment("carol/app", ca, "renamed"))    // 3 blocked by account id
	f.add(f.comment("acme/was", other, "old name")) // 4 deny= by name, lands on acme/other
	res := f.run(f.options())

	got := map[int]string{}
	for _, r := range res.Refused {
		got[r.Index] = r.Rule
	}
	assert.Equal(t, map[int]string{1: policy.RuleRepoDenied, 2: policy.RuleRepoBlocked, 3: policy.RuleRepoBlocked, 4: policy.RuleRepoDenied}, got)
	require.Len(t, res.Written, 1)
	assert.Empty(t, f.botComments(testOther, other))
	assert.Empty(t, f.botComments("acme/moved", mv))
	assert.Empty(t, f.botComments("carol/app", ca))
}

// TestRecheckIDLookupFails: when GitHub cannot say which repository a
// write goes to (the id lookup fails, not "not found"), publish cannot
// tell a renamed, opted-out repository from another: it writes nothing.
func TestRecheckIDLookupFails(t *testing.T) {
	f := newFixture(t, "")
	f.add(f.comment(testTarget, f.issue, "fine"))
	f.add(f.comment(testOther, 1, "elsewhere"))
	f.sim.AddFault(githubsim.Fault{Method: "GET", Path: "/repos/" + testOther, Kind: githubsim.FaultStatus500, Rate: 1})
	res := f.run(f.options())
	assert.Empty(t, res.Written)
	require.Len(t, res.Refused, 2)
	for _, r := range res.Refused {
		assert.Equal(t, RulePolicyUnavailable, r.Rule)
		assert.Contains(t, r.Reason, "look up the id of "+testOther)
	}
}
