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

func newStores(t *testing.T) (*jobstate.Store, *refstate.Store, *fakeclock.Clock) {
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
	return js, rs, clk
}

// TestStatesAcrossUpgrade: job states an older runner left (a done state
// with a commit of its own, naming its run; a running state) are read by
// this one as before. (A job finished now is done by its log issue's
// final marker: assemble's TestDuplicateDeliveries.)
func TestStatesAcrossUpgrade(t *testing.T) {
	tests := []struct {
		name    string
		old     string // the state an older runner left: "", running or done
		run     string // the run asking to begin
		proceed bool
		rerun   bool
	}{
		{"old done, another run", jobstate.Done, "9", false, false},
		{"old done, the run that ran it", jobstate.Done, "5", false, false},
		{"old running, its re-run", jobstate.Running, "5", true, true},
		{"old running, another run", jobstate.Running, "9", false, false},
		{"no state", "", "9", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js, rs, clk := newStores(t)
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
			b, err := js.Begin(ctx, job, tc.run)
			require.NoError(t, err)
			assert.Equal(t, tc.proceed, b.Proceed)
			assert.Equal(t, tc.rerun, b.Rerun)
		})
	}
}
