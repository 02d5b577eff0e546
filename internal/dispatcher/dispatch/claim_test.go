package dispatch

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
)

func (e *env) claimState(jobID string) string {
	st, err := e.dispatcher().states().Read(e.ctx(), DedupeRef(jobID))
	require.NoError(e.t, err)
	if st == nil {
		return ""
	}
	return st.Status
}

// Every write of a mention's handling applied and its answer lost, one at
// a time: the mention ends dispatched once (the dispatch itself may be
// delivered twice: the runner makes that harmless) and is never lost.
func TestClaimLostAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, method, path string
		kind               githubsim.FaultKind
		maxDispatches      int
	}{
		{"claim commit", "POST", "/repos/ops/control/git/commits", githubsim.FaultStatus502, 1},
		{"claim ref", "POST", "/repos/ops/control/git/refs", githubsim.FaultStatus502, 1},
		{"claim ref reset", "POST", "/repos/ops/control/git/refs", githubsim.FaultReset, 1},
		{"dispatch", "POST", "/repos/ops/control/dispatches", githubsim.FaultStatus502, 2},
		{"mark dispatched", "PATCH", "/repos/ops/control/git/refs/*", githubsim.FaultStatus502, 1},
		{"mark dispatched timeout", "PATCH", "/repos/ops/control/git/refs/*", githubsim.FaultHang, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			n := e.issue("x")
			c := e.comment(n, "alice", "@mrbot do it")
			e.sim.AddFault(githubsim.Fault{Method: tc.method, Path: tc.path, Kind: tc.kind, OnCall: 1, AfterApply: true, Delay: 50 * time.Millisecond})
			// The control client does not retry POSTs here (state
			// commits it does: refstate marks them ghclient.Repeatable):
			// the next cycle (a fresh dispatcher, as a `once` run) does.
			trig := func() *Trigger { return e.trigger("issue_comment", n, c.GetID()) }
			jobID := e.handleCycles(e.dispatcher(), trig, 3, nil, nil)
			e.dispatchedOnce(jobID, e.trigger("issue_comment", n, c.GetID()), tc.maxDispatches, e.dispatcher())
		})
	}
}

// handleCycles handles trig with d until it succeeds, at most cycles
// times, and returns its jobid. With next, each later cycle is a fresh
// process, which may find the claim of the one before (dead to it) and
// waits its lease out (advance); without, a live claim is an error: the
// process must recognise its own.
func (e *env) handleCycles(d *Dispatcher, trig func() *Trigger, cycles int, next func() *Dispatcher, advance func(time.Duration)) string {
	e.t.Helper()
	var jobID string
	for cycle := 0; cycle < cycles; cycle++ {
		if next != nil && cycle > 0 {
			d = next()
		}
		dec, err := d.Handle(e.ctx(), trig())
		jobID = dec.JobID
		if err == nil {
			break
		}
		e.t.Logf("cycle %d: %v", cycle, err)
		var ce *ClaimedError
		if errors.As(err, &ce) {
			require.NotNil(e.t, next, "our own claim must be recognised: %v", err)
			advance(DefaultClaimLease + time.Minute)
		}
	}
	return jobID
}

// dispatchedOnce checks that the mention with jobID ended dispatched, sent
// at least once and at most maxDispatches times (a lost answer of the
// dispatch itself sends it again: the runner makes that harmless), and
// that a later dispatcher, later, ignores trig.
func (e *env) dispatchedOnce(jobID string, trig *Trigger, maxDispatches int, later *Dispatcher) {
	e.t.Helper()
	assert.Equal(e.t, StatusDispatched, e.claimState(jobID))
	got := len(e.sim.Dispatches(control))
	assert.GreaterOrEqual(e.t, got, 1, "never lost")
	assert.LessOrEqual(e.t, got, maxDispatches)
	dec, err := later.Handle(e.ctx(), trig)
	require.NoError(e.t, err)
	assert.Equal(e.t, Ignore, dec.Decision)
}

// A dispatcher killed between claim and dispatch leaves a claim that
// others respect until the lease ends, then exactly one takes it over.
func TestClaimTakeoverAfterLease(t *testing.T) {
	e := newEnv(t)
	clk := fakeclock.New(time.Now().UTC())
	withClock := func(c *Config) { c.Now = clk.Now; c.ClaimLease = 5 * time.Minute }
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	trig := func() *Trigger { return e.trigger("issue_comment", n, c.GetID()) }

	dead := e.dispatcher(withClock)
	ok, err := dead.claim(e.ctx(), transport.JobID(c.GetNodeID()))
	require.NoError(t, err)
	require.True(t, ok)
	// ... and the process dies here.

	_, err = e.dispatcher(withClock).Handle(e.ctx(), trig())
	var ce *ClaimedError
	require.ErrorAs(t, err, &ce, "a live claim is left alone")
	assert.Equal(t, dead.cl.holder, ce.Holder)
	assert.Empty(t, e.sim.Dispatches(control))

	clk.Advance(6 * time.Minute)
	e.takenOverOnce(dead, transport.JobID(c.GetNodeID()), trig, 4, func() *Dispatcher { return e.dispatcher(withClock) })
}

// takenOverOnce runs n dispatchers from next at once on the mention whose
// claim dead held past its lease: exactly one takes it over and sends it,
// and dead's late mark loses (the state stays dispatched).
func (e *env) takenOverOnce(dead *Dispatcher, jobID string, trig func() *Trigger, n int, next func() *Dispatcher) {
	e.t.Helper()
	var wg sync.WaitGroup
	var dispatched atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec, err := next().Handle(e.ctx(), trig())
			switch {
			case errors.As(err, new(*ClaimedError)):
			case err != nil:
				e.t.Errorf("unexpected: %v", err)
			case dec.Decision == Dispatch:
				dispatched.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(e.t, int32(1), dispatched.Load(), "exactly one takes the claim over")
	assert.Len(e.t, e.sim.Dispatches(control), 1)
	assert.Equal(e.t, StatusDispatched, e.claimState(jobID))
	assert.Contains(e.t, e.logs.String(), "took over a claim")
	require.NoError(e.t, dead.settle(e.ctx(), jobID, StatusDispatched))
	assert.Equal(e.t, StatusDispatched, e.claimState(jobID), "the dead holder's late mark loses")
}

// An HTML page with status 200 from the dispatches endpoint is not a
// dispatch: the claim is released and the next cycle sends it.
func TestDispatchNeeds204(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	id := e.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultHTML, Status: 200, Rate: 1})
	d := e.dispatcher()
	dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "text/html")
	assert.Contains(t, err.Error(), "instead of JSON")
	assert.Equal(t, StatusReleased, e.claimState(dec.JobID))
	e.sim.RemoveFault(id)
	dec, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision)
	assert.Len(t, e.sim.Dispatches(control), 1)
}

// Claim refs older than the configured age are swept: one DELETE each
// on the REST API, or all in one push with a pusher (cmd/dispatcher's
// wiring: the control client's transport, its token).
func TestSweepClaims(t *testing.T) {
	for _, tc := range []struct {
		name   string
		push   bool
		old    int
		writes int // the sweep's content writes
	}{
		{"REST: a write a claim", false, 3, 3},
		{"push: one write", true, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clk := fakeclock.New(time.Now().UTC())
			cfg := e.cfg
			cfg.Now, cfg.StateMaxAge = clk.Now, 48*time.Hour
			if tc.push {
				p, err := refpush.New(e.gh.Client(), refpush.ServerFromAPI(e.gh.BaseURL), botToken)
				require.NoError(t, err)
				cfg.Push = p
			}
			d, err := New(cfg, Clients{GitHub: e.gh, Dispatch: e.dsp})
			require.NoError(t, err)
			n := e.issue("x")
			for i := range tc.old {
				old := e.comment(n, "alice", fmt.Sprintf("@mrbot old %d", i))
				_, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, old.GetID()))
				require.NoError(t, err)
			}
			clk.Advance(72 * time.Hour)
			recent := e.comment(n, "alice", "@mrbot recent")
			dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, recent.GetID()))
			require.NoError(t, err)
			before := len(e.sim.ContentWrites()[bot])
			res, err := d.SweepClaims(e.ctx())
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Equal(t, tc.old+1, res.Listed)
			assert.Len(t, res.Deleted, tc.old)
			assert.Equal(t, tc.writes, len(e.sim.ContentWrites()[bot])-before)
			assert.Equal(t, []string{DedupeRef(dec.JobID)}, e.sim.Refs(control, RefPrefix))
		})
	}
}
