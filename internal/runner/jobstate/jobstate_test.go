package jobstate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const control = "ops/control"

func newStores(t *testing.T) (*jobstate.Store, *refstate.Store, *githubsim.Sim, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 5, Now: clk.Now})
	sim.AddUser("ops")
	sim.AddToken("tok", "ops")
	_, err := sim.AddRepo(control, true)
	require.NoError(t, err)
	gh, err := ghclient.New(ghclient.Options{BaseURL: base, Token: "tok", RetryUnsafe: true, Sleep: clk.Sleep, Now: clk.Now, RequestTimeout: 2 * time.Second})
	require.NoError(t, err)
	js, err := jobstate.New(gh, control, clk.Now)
	require.NoError(t, err)
	rs, err := refstate.New(gh, control, clk.Now)
	require.NoError(t, err)
	return js, rs, sim, clk
}

// TestStatesAcrossUpgrade: job states an older runner left (a done state
// with a commit of its own, naming its run; a running state) are read by
// this one as before, and a job marked done now (the hour's shared
// commit, no holder) keeps every later delivery out, the re-run of the
// run that ran it included.
func TestStatesAcrossUpgrade(t *testing.T) {
	tests := []struct {
		name    string
		old     string // the state an older runner left: "", running or done
		finish  bool   // this runner's publish marks it done
		fault   bool   // the done update's answer is lost
		run     string // the run asking to begin
		proceed bool
		rerun   bool
	}{
		{"old done, another run", jobstate.Done, false, false, "9", false, false},
		{"old done, the run that ran it", jobstate.Done, false, false, "5", false, false},
		{"old running, its re-run", jobstate.Running, false, false, "5", true, true},
		{"old running, another run", jobstate.Running, false, false, "9", false, false},
		{"old running, done now, its re-run", jobstate.Running, true, false, "5", false, false},
		{"old running, done now after a lost answer", jobstate.Running, true, true, "9", false, false},
		{"no state, done now", "", true, false, "9", false, false},
		{"no state", "", false, false, "9", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js, rs, sim, clk := newStores(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			const job = "0f41aabb-5d80-58bf-8978-bc4b171fa19f"
			if tc.old != "" {
				m, err := rs.NewMark(ctx, tc.old, jobstate.Holder("5"), "")
				require.NoError(t, err)
				_, created, err := rs.Create(ctx, jobstate.Ref(job), m)
				require.NoError(t, err)
				require.True(t, created)
				clk.Advance(10 * time.Minute) // the upgrade, then the next delivery
			}
			if tc.fault {
				sim.AddFault(githubsim.Fault{Method: "PATCH", Path: "/repos/*/*/git/refs/*", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true})
			}
			if tc.finish {
				require.NoError(t, js.Finish(ctx, job))
				require.NoError(t, js.Finish(ctx, job), "finishing again is fine")
			}
			b, err := js.Begin(ctx, job, tc.run)
			require.NoError(t, err)
			assert.Equal(t, tc.proceed, b.Proceed)
			assert.Equal(t, tc.rerun, b.Rerun)
			if tc.finish {
				assert.Equal(t, jobstate.Done, b.Status)
			}
		})
	}
}
