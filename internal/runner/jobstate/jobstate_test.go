package jobstate_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const (
	control = "ops/control"
	job     = "0f41aabb-5d80-58bf-8978-bc4b171fa19f"
)

// newStores returns a job store (writing through a pusher when push is
// set) and a REST refstate store on the same repository (what older
// runners wrote with).
func newStores(t *testing.T, push bool) (*jobstate.Store, *refstate.Store, *fakeclock.Clock, *githubsim.Sim) {
	t.Helper()
	clk := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 5, Now: clk.Now})
	sim.AddUser("ops")
	sim.AddToken("tok", "ops")
	_, err := sim.AddRepo(control, true)
	require.NoError(t, err)
	gh, err := ghclient.New(ghclient.Options{BaseURL: base, Token: "tok", RetryUnsafe: true, Sleep: clk.Sleep, Now: clk.Now, RequestTimeout: 2 * time.Second})
	require.NoError(t, err)
	var p *refpush.Client
	if push {
		p, err = refpush.New(gh.Client(), base, "tok")
		require.NoError(t, err)
	}
	js, err := jobstate.New(gh, p, control, clk.Now)
	require.NoError(t, err)
	rs, err := refstate.New(gh, control, clk.Now)
	require.NoError(t, err)
	return js, rs, clk, sim
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestStatesAcrossUpgrade: job states an older runner left (a done state
// with a commit of its own, naming its run; a running state) are read by
// this one as before, whether it writes through the REST API or pushes.
// (A job finished now is done by its log issue's final marker:
// assemble's TestDuplicateDeliveries.)
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
	for _, push := range []bool{false, true} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s push=%v", tc.name, push), func(t *testing.T) {
				js, rs, clk, _ := newStores(t, push)
				ctx := ctxT(t)
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
}

// Beginning a job costs one write with a pusher (two through the REST
// API: a commit, then the ref); Prepare alone costs nothing then.
func TestBeginWrites(t *testing.T) {
	for _, tc := range []struct {
		push          bool
		prepare, both int
	}{{false, 1, 2}, {true, 0, 1}} {
		t.Run(fmt.Sprintf("push=%v", tc.push), func(t *testing.T) {
			js, _, _, sim := newStores(t, tc.push)
			ctx := ctxT(t)
			m, err := js.Prepare(ctx, "5")
			require.NoError(t, err)
			assert.Len(t, sim.ContentWrites()["ops"], tc.prepare)
			b, err := js.BeginAt(ctx, job, "5", m)
			require.NoError(t, err)
			assert.True(t, b.Proceed)
			assert.Len(t, sim.ContentWrites()["ops"], tc.both)
		})
	}
}

// A begin whose push lands but whose answer is lost proceeds (once): the
// run finds its own state; a second delivery does not proceed, and a
// re-run of the same workflow run does.
func TestBeginLostAnswer(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		t.Run(string(kind), func(t *testing.T) {
			js, _, clk, sim := newStores(t, true)
			ctx := ctxT(t)
			sim.AddFault(githubsim.Fault{Method: "POST", Path: "/" + control + ".git/git-receive-pack", Kind: kind, OnCall: 1, AfterApply: true, Delay: 10 * time.Millisecond})
			b, err := js.Begin(ctx, job, "5")
			require.NoError(t, err)
			assert.True(t, b.Proceed, "the run's own state, after the lost answer")
			assert.True(t, b.Created, "the lost answer's push made it")
			assert.False(t, b.Rerun)

			clk.Advance(time.Minute)
			dup, err := js.Begin(ctx, job, "9")
			require.NoError(t, err)
			assert.False(t, dup.Proceed, "another delivery")
			assert.False(t, dup.Created)
			assert.Equal(t, jobstate.Holder("5"), dup.Holder)

			re, err := js.Begin(ctx, job, "5")
			require.NoError(t, err)
			assert.True(t, re.Proceed, "a re-run of the workflow run")
			assert.True(t, re.Rerun)
			assert.False(t, re.Created, "a re-run did not make the state")
		})
	}
}

// Deliveries of one job racing to begin it: exactly one proceeds.
func TestBeginRace(t *testing.T) {
	js, _, _, sim := newStores(t, true)
	ctx := ctxT(t)
	const n = 5
	begins := make([]jobstate.Begin, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { begins[i], errs[i] = js.Begin(ctx, job, fmt.Sprint(100+i)) })
	}
	wg.Wait()
	proceeded := 0
	for i := range n {
		require.NoError(t, errs[i])
		if begins[i].Proceed {
			proceeded++
		}
	}
	assert.Equal(t, 1, proceeded)
	posts := 0
	for _, r := range sim.Requests() {
		if r.Method == http.MethodPost {
			posts++
		}
	}
	assert.Equal(t, n, posts, "one push a delivery, nothing else written")
}
