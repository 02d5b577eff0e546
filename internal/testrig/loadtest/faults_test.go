package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/racebuild"
)

const faultRate = 0.20

// Sizes of the fault, restart and burst tests: make test runs them small,
// make prove (MENTION_RUNNER_PROVE=full) at full size. The small size
// still has every fault kind fire, sharded and PR contexts, restarts, and
// far more writes a minute than the limit; so does the race build's.
func mentions(t *testing.T) int { return scale(t, 16, 50, 200) }
func repos(t *testing.T) int    { return scale(t, 4, 10, 20) }

// scale picks a scenario's size: make prove's (full), make test's (small),
// or in a race build a smaller one still (racebuild: the -race run of
// make test; the same test runs at make test's size without -race beside
// it).
func scale(t *testing.T, race, small, full int) int {
	t.Helper()
	if proveFull() {
		return full
	}
	return racebuild.Scale(t, race, small)
}

func newWorld(t *testing.T, seed int64) *World {
	t.Helper()
	if testing.Short() {
		t.Skip("load test: skipped in -short mode (make test runs it)")
	}
	w, err := NewWorld(WorldOptions{Repos: repos(t), Seed: seed})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// hangGuard only catches a hang: it is far above the slowest measured run
// (a burst under load, race detector on, CPU hogs running), never a speed
// requirement. Speed lives in make bench.
const hangGuard = 30 * time.Minute

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// TestFaults200Mentions: 200 mentions over 20 repos (make test: 50 over
// 10) while 20% of all requests fail (5xx, resets, hangs, secondary
// limits). Exactly one job per mention is dispatched, each once; every
// queued write is published exactly once.
func TestFaults200Mentions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 8)
	ms, err := w.SeedMentions(mentions(t), 5)
	require.NoError(t, err)
	w.InjectFaults(faultRate, 5*time.Millisecond)

	st, err := w.DispatchAll(testCtx(t), ms, 30, nil)
	require.NoError(t, err)
	// every request so far is the dispatcher's. Most faults it gets over
	// within the handling (a repeatable write sent again, an ambiguous one
	// read back), so a failed handling is not what shows they bit
	hit := 0
	for _, r := range w.Sim.Requests() {
		if r.Fault != "" {
			hit++
		}
	}
	t.Logf("dispatch: %d cycles, %d failed handlings retried, %d of its requests faulted", st.Cycles, st.Failures, hit)
	assertDispatchedOnce(t, w, ms, st)
	assert.Positive(t, hit, "the faults must have bitten the dispatcher's requests")

	publishAll(t, w, ms)
	assertFaultsSeen(t, w)
}

// TestRestarts200Mentions: the same, with the dispatcher process killed
// (its context cancelled mid-handling) at random points and restarted.
func TestRestarts200Mentions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 9)
	ms, err := w.SeedMentions(mentions(t), 5)
	require.NoError(t, err)
	w.InjectFaults(faultRate, 5*time.Millisecond)
	rng := rand.New(rand.NewPCG(9, 9))
	restart := func() (bool, time.Duration) {
		if rng.IntN(8) != 0 {
			return false, 0
		}
		return true, time.Duration(rng.IntN(4000)) * time.Microsecond
	}
	st, err := w.DispatchAll(testCtx(t), ms, 40, restart)
	require.NoError(t, err)
	t.Logf("dispatch: %d cycles, %d failed handlings, %d restarts", st.Cycles, st.Failures, st.Restarts)
	assert.Positive(t, st.Restarts)
	assertDispatchedOnce(t, w, ms, st)
	// publish is the same as in TestFaults200Mentions: the restarts are
	// the dispatcher's, so its invariants are what this test checks.
}

// assertDispatchedOnce: one job per mention, nothing lost, every claim
// marked dispatched. A dispatch whose answer was lost is sent again (the
// runner makes a second delivery harmless): those are counted, not failed.
func assertDispatchedOnce(t *testing.T, w *World, ms []Mention, st *DispatchStats) {
	t.Helper()
	jobs, err := w.Jobs()
	require.NoError(t, err)
	var lost []string
	again := 0
	for _, m := range ms {
		ds, ok := jobs[m.JobID]
		if !ok {
			lost = append(lost, fmt.Sprintf("%s#%d (%s: %s)", m.Repo, m.Number, m.JobID, st.Decided[m.JobID]))
			continue
		}
		again += len(ds) - 1
	}
	t.Logf("dispatch: %d jobs delivered again after an ambiguous failure", again)
	assert.Empty(t, lost, "mentions never dispatched")
	assert.Len(t, jobs, len(ms), "jobs dispatched")
	for _, m := range ms {
		if st.Decided[m.JobID] != dispatch.Dispatch && st.Decided[m.JobID] != dispatch.Ignore {
			t.Errorf("mention %s decided %q", m.JobID, st.Decided[m.JobID])
		}
		assert.Contains(t, w.Sim.Refs(Control, contract.DispatchedRefPrefix), contract.DispatchedRef(m.JobID))
	}
}

// publishAll publishes every dispatched job (re-running failed publish
// runs) and checks each queued write landed exactly once.
func publishAll(t *testing.T, w *World, ms []Mention) {
	t.Helper()
	jobs, err := w.Jobs()
	require.NoError(t, err)
	dir := t.TempDir()
	var st PublishStats
	for i, m := range ms {
		ds, ok := jobs[m.JobID]
		if !ok {
			continue // already reported lost
		}
		ctxJSON, err := JobContext(ds)
		require.NoError(t, err)
		runDir := filepath.Join(dir, fmt.Sprintf("run-%d", i))
		require.NoError(t, WriteRun(runDir, m, w.Clock.Now()))
		_, err = w.PublishJob(testCtx(t), ctxJSON, runDir, 8, &st)
		require.NoError(t, err, "job %s", m.JobID)
	}
	t.Logf("publish: %d runs, %d re-runs", st.Attempts, st.Reruns)
	for _, m := range ms {
		seen := map[int]int{}
		for _, c := range w.Sim.Comments(m.Repo, m.Number) {
			if !strings.EqualFold(c.GetUser().GetLogin(), Bot) {
				continue
			}
			if job, idx, ok := contract.ParseOutputMarker(c.GetBody()); ok && job == m.JobID {
				seen[idx]++
			}
		}
		for i := 0; i < QueuedComments; i++ {
			assert.Equal(t, 1, seen[i], "%s#%d output %d published %d times", m.Repo, m.Number, i, seen[i])
		}
	}
	logIssues := map[string]int{}
	for _, is := range w.Sim.Issues(Control) {
		for _, m := range ms {
			if strings.Contains(is.GetBody(), m.JobID) {
				logIssues[m.JobID]++
			}
		}
	}
	for _, m := range ms {
		assert.Equal(t, 1, logIssues[m.JobID], "log issues for job %s", m.JobID)
	}
}

func assertFaultsSeen(t *testing.T, w *World) {
	t.Helper()
	kinds := map[string]int{}
	for _, r := range w.Sim.Requests() {
		if r.Fault != "" {
			kinds[r.Fault]++
		}
	}
	t.Logf("faults injected: %v", kinds)
	for _, k := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang, githubsim.FaultSecondaryLimit} {
		assert.Positive(t, kinds[string(k)], "no %s fault fired", k)
	}
}
