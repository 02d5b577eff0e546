package assemble

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/githubsim"

	"github.com/mention-runner/mention-runner/internal/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestsOf runs one event and returns the API requests it made, as
// "METHOD /path-shape" counts.
func requestsOf(t *testing.T, h *harness, ev []byte, opts ...runOpt) (outcome, int, string) {
	t.Helper()
	o := h.run(t, ev, opts...)
	// The simulator logs a request after answering it, so wait for the
	// run's last request (the sweep's listing) to be logged.
	var reqs []githubsim.LoggedRequest
	for range 500 {
		reqs = reqs[:0]
		done := false
		for _, r := range h.sim.Requests() {
			if r.Token == "tok-"+o.runID {
				reqs = append(reqs, r)
				done = done || strings.HasSuffix(r.Path, "/git/matching-refs/mention-runner/jobs")
			}
		}
		if done {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	counts := map[string]int{}
	for _, r := range reqs {
		counts[r.Method+" "+shape(r.Path)]++
	}
	var keys []string
	for k, n := range counts {
		keys = append(keys, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(keys)
	return o, len(reqs), strings.Join(keys, ", ")
}

// shape drops ids from a path: /repos/o/r/git/commits/<sha> → git/commits.
func shape(p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/repos/acme/control/"), "/")
	if len(segs) >= 2 && segs[0] == "git" {
		return "git/" + segs[1]
	}
	return segs[0]
}

// TestRequestCounts pins how many API requests each kind of run makes
// (no other jobs' refs present, so the sweep costs one listing).
func TestRequestCounts(t *testing.T) {
	t.Parallel()
	small := events(t, transport.JobID("IC_rs"), contextFor("IC_rs", 100))
	o, n, detail := requestsOf(t, newHarness(t), small[0])
	require.NoError(t, o.err)
	t.Logf("agent_small run: %d requests (%s)", n, detail)
	assert.Equal(t, 9, n) // job state commit and ref, GET /user, opt-out list, the repository's ids, list issues, create issue, sweep listings of shards and job states

	for _, total := range []int{3, 20} {
		h := newHarness(t) // no other job's refs for the sweep to inspect
		node := fmt.Sprintf("IC_r%d", total)
		pad := map[int]int{3: 120_000, 20: 900_000}[total]
		ev := events(t, transport.JobID(node), contextFor(node, pad))
		require.Equal(t, total, len(ev))
		for i := 0; i < total-1; i++ {
			o, n, detail := requestsOf(t, h, ev[i])
			require.NoError(t, o.err)
			if i == 0 {
				t.Logf("%d shards, a waiting shard run: %d requests (%s)", total, n, detail)
				assert.Equal(t, 6, n) // blob, tree, commit, ref, listing, sweep listing
			}
		}
		o, n, detail := requestsOf(t, h, ev[total-1])
		require.NoError(t, o.err)
		require.True(t, o.res.Ready)
		t.Logf("%d shards, the proceeding run: %d requests (%s)", total, n, detail)
		assert.Equal(t, 6+2+2*(total-1)+2+1+1+3+1, n) // + lock commit and ref, 2 reads a shard, job state commit and ref, the opt-out list, the repository's ids, 3 for the log issue, job states sweep

		o, n, detail = requestsOf(t, h, ev[0])
		require.NoError(t, o.err)
		t.Logf("%d shards, a late duplicate after the lock: %d requests (%s)", total, n, detail)
	}
}
