package dispatch

import (
	"context"
	"fmt"
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

// TestSweepJobStates: the claim sweep deletes each expired claim's job
// state (the runner's, made a little after the claim) in the same push,
// each from the commit it listed: a young claim's state, a state whose
// job has no claim and a state that moved since it was listed stay; a
// push whose answer is lost is not repeated, and the next sweep finishes.
func TestSweepJobStates(t *testing.T) {
	const old = 3
	for _, tc := range []struct {
		name    string
		ran     int  // how many of the old jobs have a state (the others never ran)
		orphan  bool // an old job state whose mention has no claim
		move    bool // one old state moves between the listing and the push
		fault   *githubsim.Fault
		along   int // job states deleted
		writes  int // the content writes while it sweeps (a push is one)
		errors  int
		leftOld int // old job states left
	}{
		{name: "claims and their states: one push", ran: old, along: old, writes: 1},
		{name: "a job that never ran", ran: old - 1, along: old - 1, writes: 1},
		{name: "a state without a claim is left", ran: old, orphan: true, along: old, writes: 1, leftOld: 1},
		// the move is a write too
		{name: "a state moved since listed is left", ran: old, move: true, along: old - 1, writes: 2, errors: 1, leftOld: 1},
		{name: "lost answer, applied", ran: old, writes: 1, errors: 1,
			fault: &githubsim.Fault{Method: "POST", Path: "/" + control + ".git/git-receive-pack", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true}},
		// the push never arrived: GitHub counts no write
		{name: "lost answer, not applied", ran: old, writes: 0, errors: 1, leftOld: old,
			fault: &githubsim.Fault{Method: "POST", Path: "/" + control + ".git/git-receive-pack", Kind: githubsim.FaultReset, OnCall: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clk := fakeclock.New(time.Now().UTC())
			d := pushingDispatcher(t, e, clk, false)
			p := d.cfg.Push
			runs, err := refstate.New(e.gh, control, clk.Now) // the runner's job states
			require.NoError(t, err)
			runs.Push = p
			begin := func(jobID string) {
				m, err := runs.NewMark(e.ctx(), "running", "run "+jobID, "")
				require.NoError(t, err)
				_, created, err := runs.Create(e.ctx(), contract.RunStateRef(jobID), m)
				require.NoError(t, err)
				require.True(t, created)
			}
			n := e.issue("x")
			var oldJobs []string
			for i := range old {
				c := e.comment(n, "alice", fmt.Sprintf("@mrbot old %d", i))
				dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
				require.NoError(t, err)
				oldJobs = append(oldJobs, dec.JobID)
			}
			clk.Advance(time.Minute) // the jobs start after their dispatch
			for _, j := range oldJobs[:tc.ran] {
				begin(j)
			}
			if tc.orphan {
				begin("no-claim")
			}
			clk.Advance(72 * time.Hour)
			recent := e.comment(n, "alice", "@mrbot recent")
			dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, recent.GetID()))
			require.NoError(t, err)
			begin(dec.JobID)

			o := d.claimSweep()
			moved := map[string]string{}
			if tc.move {
				o.Along = func(ctx context.Context, claims []string) ([]refpush.Update, error) {
					dels, err := d.jobStatesOf(ctx, claims)
					cur, rerr := runs.Read(ctx, dels[0].Ref)
					require.NoError(t, rerr)
					m, merr := runs.NewMark(ctx, "running", "run again", cur.Commit)
					require.NoError(t, merr)
					_, aerr := runs.Advance(ctx, dels[0].Ref, m)
					require.NoError(t, aerr)
					moved[dels[0].Ref] = m.Commit
					return dels, err
				}
			}
			if tc.fault != nil {
				e.sim.AddFault(*tc.fault)
			}
			before, reqs := len(e.sim.ContentWrites()[bot]), len(e.sim.Requests())
			res, err := d.states().Sweep(e.ctx(), o)
			require.NoError(t, err)
			assert.Len(t, res.Errors, tc.errors, "%v", res.Errors)
			assert.Len(t, res.Along, tc.along)
			assert.Equal(t, tc.writes, len(e.sim.ContentWrites()[bot])-before)
			sent := pushesSince(e.sim, reqs)
			assert.Equal(t, 1, sent-map[bool]int{true: 1}[tc.move], "the claims and their states go in one push, sent once")
			states := e.sim.Refs(control, contract.RunStateRefPrefix)
			assert.Contains(t, states, contract.RunStateRef(dec.JobID), "a young claim's state stays")
			assert.Len(t, states, 1+tc.leftOld)
			for ref, c := range moved {
				cur, err := runs.Read(e.ctx(), ref)
				require.NoError(t, err)
				require.NotNil(t, cur, "the moved state stays")
				assert.Equal(t, c, cur.Commit, "the moved state stays at its new commit")
			}

			// the next sweep leaves the young claim, its state and what was
			// left on purpose
			e.sim.ClearFaults()
			_, err = d.SweepClaims(e.ctx())
			require.NoError(t, err)
			assert.Equal(t, []string{DedupeRef(dec.JobID)}, e.sim.Refs(control, RefPrefix))
			left := 1
			if tc.orphan || tc.move {
				left++
			}
			assert.Len(t, e.sim.Refs(control, contract.RunStateRefPrefix), left)
		})
	}
}
