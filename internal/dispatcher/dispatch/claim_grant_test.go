package dispatch

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// A fresh wired dispatcher (a `dispatcher once`) claims with its first
// grant's commit: the claim reads as claimed by the ledger handle's
// holder, a second dispatcher leaves it alone while the lease runs, and
// after the lease exactly one takes it over.
func TestClaimOnGrantCommit(t *testing.T) {
	e := newEnv(t)
	clk := fakeclock.New(time.Now().UTC())
	withClock := func(c *Config) { c.Now = clk.Now; c.ClaimLease = 5 * time.Minute }
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	jobID := transport.JobID(c.GetNodeID())
	trig := func() *Trigger { return e.trigger("issue_comment", n, c.GetID()) }

	dead := e.wiredDispatcher(clk, withClock)
	require.True(t, dead.cl.grants, "a ledger used by one dispatcher lends it its grants")
	ok, err := dead.claim(e.ctx(), jobID)
	require.NoError(t, err)
	require.True(t, ok)
	st, err := dead.states().Read(e.ctx(), DedupeRef(jobID))
	require.NoError(t, err)
	require.NotNil(t, st)
	assert.Equal(t, StatusClaimed, st.Status)
	assert.NotEqual(t, dead.cl.holder, st.Holder, "the ledger handle's holder, not a claim commit's")
	assert.True(t, dead.mine(st.Holder))
	c0, _, err := e.gh.Git.GetCommit(e.ctx(), "ops", "control", st.Commit)
	require.NoError(t, err)
	assert.Contains(t, c0.GetMessage(), contract.PaceMessagePrefix, "the claim ref points at the grant's commit")
	assert.WithinDuration(t, clk.Now(), st.At, 2*time.Second)
	// ... and the process dies here.

	_, err = e.wiredDispatcher(clk, withClock).Handle(e.ctx(), trig())
	var ce *ClaimedError
	require.ErrorAs(t, err, &ce, "a live claim is left alone")
	assert.Equal(t, st.Holder, ce.Holder)
	assert.Empty(t, e.sim.Dispatches(control))

	clk.Advance(6 * time.Minute)
	e.takenOverOnce(dead, jobID, trig, 3, func() *Dispatcher { return e.wiredDispatcher(clk, withClock) })
}

// Two dispatchers sharing one ledger handle would each take a claim on
// the shared grant commit as their own: only the first may use them.
func TestGrantCommitsOwnedOnce(t *testing.T) {
	e := newEnv(t)
	clk := fakeclock.New(time.Now().UTC())
	d := e.wiredDispatcher(clk)
	require.True(t, d.cl.grants)
	other, err := New(e.cfg, Clients{GitHub: e.gh, Dispatch: e.dsp, Budget: d.budget})
	require.NoError(t, err)
	assert.False(t, other.cl.grants)
}

// Every write of a fresh wired dispatcher's mention applied and its answer
// lost, one at a time, each cycle a fresh process (`dispatcher once`) or
// the same one: the mention ends dispatched once and is never lost.
func TestClaimOnGrantLostAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, method, path string
		kind               githubsim.FaultKind
		onCall             int
		maxDispatches      int
	}{
		{"ledger commit", "POST", "/repos/ops/control/git/commits", githubsim.FaultStatus502, 1, 1},
		{"ledger move", "PATCH", "/repos/ops/control/git/refs/mention-runner/pace/*", githubsim.FaultStatus502, 1, 1},
		{"claim ref", "POST", "/repos/ops/control/git/refs", githubsim.FaultStatus502, 1, 1},
		{"claim ref reset", "POST", "/repos/ops/control/git/refs", githubsim.FaultReset, 1, 1},
		{"dispatched commit", "POST", "/repos/ops/control/git/commits", githubsim.FaultStatus502, 2, 1},
		{"dispatch", "POST", "/repos/ops/control/dispatches", githubsim.FaultStatus502, 1, 2},
		{"mark dispatched", "PATCH", "/repos/ops/control/git/refs/mention-runner/dispatched/*", githubsim.FaultStatus502, 1, 1},
	} {
		for _, fresh := range []bool{false, true} {
			name := tc.name + "/same process"
			if fresh {
				name = tc.name + "/fresh process"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				clk := fakeclock.New(time.Now().UTC())
				n := e.issue("x")
				c := e.comment(n, "alice", "@mrbot do it")
				e.sim.AddFault(githubsim.Fault{Method: tc.method, Path: tc.path, Kind: tc.kind, OnCall: tc.onCall, AfterApply: true, Delay: 50 * time.Millisecond})
				event := func(c *Config) { c.FlushEach = true }
				trig := func() *Trigger { return e.trigger("issue_comment", n, c.GetID()) }
				var next func() *Dispatcher
				if fresh {
					next = func() *Dispatcher { return e.wiredDispatcher(clk, event) }
				}
				// a fresh process finds the dead one's claim: the lease runs out
				advance := func(d time.Duration) { e.later(d); clk.Advance(d) }
				jobID := e.handleCycles(e.wiredDispatcher(clk, event), trig, 4, next, advance)
				e.dispatchedOnce(jobID, e.trigger("issue_comment", n, c.GetID()), tc.maxDispatches, e.wiredDispatcher(clk))
			})
		}
	}
}

// A deployment upgraded in place: claims made before (their own claim
// commits) are read as before: dispatched ones are not sent again, a live
// one is left alone, a dead one is taken over once, by a dispatcher that
// claims with its grants; the ledger an older version wrote (undated
// commits) is built on, its grants carried on.
func TestClaimUpgradeFromClaimCommits(t *testing.T) {
	e := newEnv(t)
	// early in an hour: the 6 minutes below never cross into the next
	// (whose first grant a quiet account does not rename: writebudget)
	clk := fakeclock.New(time.Now().UTC().Truncate(time.Hour).Add(10 * time.Minute))
	withClock := func(c *Config) { c.Now = clk.Now; c.ClaimLease = 5 * time.Minute }
	mention := func(title string) (*Trigger, string) {
		n := e.issue(title)
		c := e.comment(n, "alice", "@mrbot "+title)
		return e.trigger("issue_comment", n, c.GetID()), transport.JobID(c.GetNodeID())
	}
	old := e.dispatcher(withClock) // no ledger: claim commits of its own
	done, doneID := mention("done before")
	dec, err := old.Handle(e.ctx(), done)
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision)
	live, liveID := mention("claimed before")
	ok, err := old.claim(e.ctx(), liveID)
	require.NoError(t, err)
	require.True(t, ok)

	// and the account's ledger as a version before grant commits wrote it
	// (undated commit, a grant of another process in force)
	oldLedger, _, err := e.gh.Git.CreateCommit(e.ctx(), "ops", "control", &github.Commit{
		Message: github.String(contract.PaceMessagePrefix + fmt.Sprintf(`{"grants":[{"at_ms":%d,"n":5,"by":"old"}],"pause_until_ms":0,"holder":"publish-1","since_ms":%d}`,
			clk.Now().UnixMilli(), clk.Now().UnixMilli())),
		Tree: &github.Tree{SHA: github.String(refstate.EmptyTree)}}, nil)
	require.NoError(t, err)
	_, _, err = e.gh.Git.CreateRef(e.ctx(), "ops", "control", &github.Reference{Ref: github.String(contract.PaceGenRef(bot, 1)), Object: &github.GitObject{SHA: oldLedger.SHA}})
	require.NoError(t, err)

	d := e.wiredDispatcher(clk, withClock)
	dec, err = d.Handle(e.ctx(), done)
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision, dec.Reason)
	_, err = d.Handle(e.ctx(), live)
	require.ErrorAs(t, err, new(*ClaimedError))
	clk.Advance(6 * time.Minute)
	dec, err = d.Handle(e.ctx(), live)
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.Len(t, e.sim.Dispatches(control), 2)
	// the new grants carried the old grant on: the first on top of the old
	// ledger, closing it; the ledger is now the generation named for the
	// hour (writebudget's named generations), generation 1 deleted
	refs, _, err := e.gh.Git.ListMatchingRefs(e.ctx(), "ops", "control", &github.ReferenceListOptions{Ref: contract.PaceRef(bot)[len("refs/"):]})
	require.NoError(t, err)
	top, best := refs[0], 0
	for _, r := range refs {
		assert.NotEqual(t, contract.PaceGenRef(bot, 1), r.GetRef(), "generation 1 deleted")
		if g, _ := contract.PaceGen(bot, r.GetRef()); g > best {
			top, best = r, g
		}
	}
	assert.Equal(t, contract.PaceGenRef(bot, contract.PaceWindowGen(clk.Now())), top.GetRef())
	c, _, err := e.gh.Git.GetCommit(e.ctx(), "ops", "control", top.GetObject().GetSHA())
	require.NoError(t, err)
	assert.Contains(t, c.GetMessage(), `"by":"old"`)
	assert.Equal(t, StatusDispatched, e.claimState(doneID))
	assert.Equal(t, StatusDispatched, e.claimState(liveID))
}
