package loadtest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burstMentions arrive within one minute: 500 in make prove, 120 in make
// test (about 500 writes, six times the per-minute limit), 40 in make
// test's -race run (still twice the limit).
func burstMentions(t *testing.T) int { return scale(t, 40, 120, 500) }

// TestBurst500Mentions: 500 mentions (make test: 120) posted within a minute. With GitHub's
// secondary limit at 80 content-creating requests per minute per token
// (the simulator enforces it), the dispatcher's refs, dispatches and 👀
// reactions, then publish's writes for a sample of the jobs, never provoke
// a secondary-limit response: the pacers keep under it.
func TestBurst500Mentions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 10)
	start := w.Clock.Now()
	ms, err := w.SeedMentions(burstMentions(t), 0)
	require.NoError(t, err)
	require.Less(t, w.Clock.Now().Sub(start), time.Minute, "the burst must arrive within a minute")
	w.Sim.SetSecondaryLimit(80)
	w.Sim.ResetRequests()

	st, err := w.DispatchAll(testCtx(t), ms, 3, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Cycles, "no mention needed a second cycle")
	assert.Zero(t, st.Failures)
	assertDispatchedOnce(t, w, ms, st)
	reactions := 0
	for _, m := range ms {
		reactions += len(w.Sim.Reactions(m.Repo, m.Trigger.CommentID))
	}
	assert.Equal(t, burstMentions(t), reactions, "one 👀 per mention")

	// publish a sample of the jobs, each run its own process and pacer
	jobs, err := w.Jobs()
	require.NoError(t, err)
	var pst PublishStats
	for i, m := range ms[:20] {
		ctxJSON, err := JobContext(jobs[m.JobID])
		require.NoError(t, err)
		runDir := filepath.Join(t.TempDir(), fmt.Sprintf("run-%d", i))
		require.NoError(t, WriteRun(runDir, m, w.Clock.Now()))
		_, err = w.PublishJob(testCtx(t), ctxJSON, runDir, 1, &pst)
		require.NoError(t, err)
	}

	writes, limited := 0, 0
	var first time.Time
	for _, r := range w.Sim.Requests() {
		if r.Method == "GET" || r.Method == "HEAD" {
			continue
		}
		if first.IsZero() {
			first = r.At
		}
		writes++
		if r.Status == 403 && strings.Contains(string(r.RespBody), "secondary rate limit") {
			limited++
		}
	}
	elapsed := w.Clock.Now().Sub(first)
	t.Logf("burst: %d content-creating requests over %s of simulated time (%.1f/min)", writes, elapsed.Round(time.Second), float64(writes)/elapsed.Minutes())
	assert.Zero(t, limited, "secondary-limit responses provoked")
}
