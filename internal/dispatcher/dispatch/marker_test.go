package dispatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// markerEnv is a dispatcher that pushes, on a fake clock, with old
// claims to sweep or none.
type markerEnv struct {
	*env
	d   *Dispatcher
	clk *fakeclock.Clock
}

func newMarkerEnv(t *testing.T, oldClaims int, dryRun bool) markerEnv {
	t.Helper()
	e := newEnv(t)
	clk := fakeclock.New(time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC))
	d := pushingDispatcher(t, e, clk, false)
	n := e.issue("x")
	for i := range oldClaims {
		c := e.comment(n, "alice", fmt.Sprintf("@mrbot old %d", i))
		_, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
		require.NoError(t, err)
	}
	clk.Advance(72 * time.Hour)
	if dryRun {
		d = pushingDispatcher(t, e, clk, true)
	}
	return markerEnv{env: e, d: d, clk: clk}
}

// pushingDispatcher is a dispatcher on e that writes CONTROL with pushes,
// on clk, keeping claims 48 hours.
func pushingDispatcher(t *testing.T, e *env, clk *fakeclock.Clock, dryRun bool) *Dispatcher {
	t.Helper()
	p, err := refpush.New(e.gh.Client(), refpush.ServerFromAPI(e.gh.BaseURL), botToken)
	require.NoError(t, err)
	cfg := e.cfg
	cfg.Now, cfg.StateMaxAge, cfg.Push, cfg.DryRun = clk.Now, 48*time.Hour, p, dryRun
	d, err := New(cfg, Clients{GitHub: e.gh, Dispatch: e.dsp})
	require.NoError(t, err)
	return d
}

// marker is the sweep marker's commit and date ("" when missing).
func (m markerEnv) marker(t *testing.T) (string, time.Time) {
	t.Helper()
	rs, err := refstate.New(m.gh, control, m.clk.Now)
	require.NoError(t, err)
	cur, err := rs.Read(m.ctx(), contract.SweepMarkerRef)
	require.NoError(t, err)
	if cur == nil {
		return "", time.Time{}
	}
	return cur.Commit, cur.At
}

// setMarker sets the sweep marker as a dispatcher's sweep did age ago.
func (m markerEnv) setMarker(t *testing.T, age time.Duration) {
	t.Helper()
	rs, err := refstate.New(m.gh, control, func() time.Time { return m.clk.Now().Add(-age) })
	require.NoError(t, err)
	rs.Push = m.d.cfg.Push
	require.NoError(t, rs.MarkShared(m.ctx(), contract.SweepMarkerRef, contract.SweepMarkerStatus, ""))
}

func pushesSince(sim *githubsim.Sim, from int) (n int) {
	for _, r := range sim.Requests()[from:] {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git-receive-pack") {
			n++
		}
	}
	return n
}

// TestSweepMarker: the claim sweep sets the sweep marker in its own push
// when it deletes, writes it alone only when it is missing or a day old,
// and not at all in a dry run; a lost answer on the sweep's push is
// harmless: the next sweep finds the marker set, or sets it.
func TestSweepMarker(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old       int           // old claims to sweep
		marker    time.Duration // the marker's age; < 0 = none
		dryRun    bool
		fault     githubsim.FaultKind // on the sweep's push
		pushes    int
		marked    bool
		markedNow bool // the marker holds this hour's commit after
	}{
		{name: "deletes: the marker in the sweep's push", old: 3, marker: -1, pushes: 1, marked: true, markedNow: true},
		{name: "deletes, marked this hour: left", old: 3, marker: 0, pushes: 1, markedNow: true},
		{name: "deletes, a stale marker: in the sweep's push", old: 3, marker: 30 * time.Hour, pushes: 1, marked: true, markedNow: true},
		{name: "nothing to delete, no marker: one write", marker: -1, pushes: 1, marked: true, markedNow: true},
		{name: "nothing to delete, 23 hours old: no write", marker: 23 * time.Hour, pushes: 0},
		{name: "nothing to delete, 25 hours old: one write", marker: 25 * time.Hour, pushes: 1, marked: true, markedNow: true},
		{name: "dry run: nothing at all", old: 3, marker: -1, dryRun: true},
		{name: "lost answer, applied", old: 3, marker: -1, fault: githubsim.FaultStatus502, pushes: 1, markedNow: true},
		{name: "lost answer, not applied", old: 3, marker: -1, fault: githubsim.FaultReset, pushes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarkerEnv(t, tc.old, tc.dryRun)
			if tc.marker >= 0 {
				m.setMarker(t, tc.marker)
			}
			before, _ := m.marker(t)
			if tc.fault != "" {
				m.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/" + control + ".git/git-receive-pack", Kind: tc.fault, OnCall: 1, AfterApply: tc.fault == githubsim.FaultStatus502})
			}
			from := len(m.sim.Requests())
			res, err := m.d.SweepClaims(m.ctx())
			require.NoError(t, err)
			assert.Equal(t, tc.pushes, pushesSince(m.sim, from), "pushes")
			assert.Equal(t, tc.marked, res.Marked)
			if tc.dryRun {
				assert.Empty(t, m.sim.Requests()[from:], "a dry run sends nothing")
				assert.Len(t, m.sim.Refs(control, RefPrefix), tc.old)
			}
			sha, at := m.marker(t)
			switch {
			case tc.markedNow:
				assert.Equal(t, m.clk.Now().Truncate(time.Hour), at, "dated at this hour")
			default:
				assert.Equal(t, before, sha, "the marker left as it was")
			}
			if tc.fault == "" {
				assert.Empty(t, res.Errors)
				return
			}
			assert.NotEmpty(t, res.Errors)
			// the next sweep finishes and leaves the marker fresh, in one push at most
			m.sim.ClearFaults()
			m.clk.Advance(time.Minute)
			from = len(m.sim.Requests())
			res, err = m.d.SweepClaims(m.ctx())
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.LessOrEqual(t, pushesSince(m.sim, from), 1)
			assert.Empty(t, m.sim.Refs(control, RefPrefix))
			_, at = m.marker(t)
			assert.Equal(t, m.clk.Now().Truncate(time.Hour), at)
		})
	}
}

// TestSweepClaimsUnlessSwept: a process that sweeps now and then (event
// mode) reads the marker first and stays out when a dispatcher swept
// within the hour.
func TestSweepClaimsUnlessSwept(t *testing.T) {
	for _, tc := range []struct {
		name   string
		marker time.Duration // < 0 = none
		swept  bool
	}{
		{"no marker: sweeps", -1, true},
		{"swept 30 minutes ago: one request", 30 * time.Minute, false},
		{"swept 2 hours ago: sweeps", 2 * time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarkerEnv(t, 2, false)
			if tc.marker >= 0 {
				m.setMarker(t, tc.marker)
			}
			from := len(m.sim.Requests())
			res, err := m.d.SweepClaimsUnlessSwept(m.ctx(), time.Hour)
			require.NoError(t, err)
			if !tc.swept {
				assert.Nil(t, res)
				assert.Len(t, m.sim.Requests()[from:], 1, "the marker's ref")
				assert.Len(t, m.sim.Refs(control, RefPrefix), 2)
				return
			}
			require.NotNil(t, res)
			assert.Len(t, res.Deleted, 2)
			assert.Empty(t, m.sim.Refs(control, RefPrefix))
		})
	}
}

// TestSweepEvery: a process that does not poll (serve) sweeps claims at
// once and then every interval, by its sleep, until its context ends;
// a dry run does not sweep.
func TestSweepEvery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dryRun bool
		sweeps int
	}{
		{"serve sweeps hourly", false, 3},
		{"dry run: none", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarkerEnv(t, 2, tc.dryRun)
			ctx, cancel := context.WithCancel(m.ctx())
			defer cancel()
			var waits []time.Duration
			sleep := func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				if len(waits) == 3 {
					cancel()
					return context.Canceled
				}
				m.clk.Advance(d)
				return nil
			}
			from := len(m.sim.Requests())
			m.d.SweepEvery(ctx, 0, sleep)
			listings := 0
			for _, r := range m.sim.Requests()[from:] {
				if strings.Contains(r.Path, "matching-refs/"+strings.TrimPrefix(RefPrefix, "refs/")) {
					listings++
				}
			}
			assert.Equal(t, tc.sweeps, listings, "claim listings")
			if tc.dryRun {
				assert.Empty(t, waits)
				assert.Len(t, m.sim.Refs(control, RefPrefix), 2)
				return
			}
			assert.Equal(t, []time.Duration{time.Hour, time.Hour, time.Hour}, waits)
			assert.Empty(t, m.sim.Refs(control, RefPrefix), "the old claims swept")
			_, at := m.marker(t)
			assert.False(t, at.IsZero(), "the marker set")
		})
	}
}

// TestEventSweep: an event process sweeps after one mention in
// EventSweepOneIn, drawn by the job's id.
func TestEventSweep(t *testing.T) {
	var drawn, undrawn string
	for i := 0; drawn == "" || undrawn == ""; i++ {
		id := fmt.Sprintf("job-%d", i)
		if eventSweepDrawn(id) {
			drawn = id
		} else {
			undrawn = id
		}
	}
	n := 0
	for i := range 10_000 {
		if eventSweepDrawn(fmt.Sprintf("job-%d", i)) {
			n++
		}
	}
	assert.InDelta(t, 10_000/EventSweepOneIn, n, 100)
	for _, tc := range []struct {
		name, jobID string
		swept       bool
	}{
		{"drawn", drawn, true},
		{"not drawn", undrawn, false},
		{"no job", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarkerEnv(t, 2, false)
			m.d.EventSweep(m.ctx(), tc.jobID)
			assert.Equal(t, tc.swept, len(m.sim.Refs(control, RefPrefix)) == 0)
		})
	}
}
