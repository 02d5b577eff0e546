package assemble

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestsOf runs one event and returns the API requests it made, as
// "METHOD /path-shape" counts, and their sequential round trips.
func requestsOf(t *testing.T, h *harness, ev []byte, opts ...runOpt) (outcome, int, int, string) {
	t.Helper()
	o := h.run(t, ev, opts...)
	reqs := h.requestsOf(o)
	counts := map[string]int{}
	for _, r := range reqs {
		counts[r.Method+" "+shape(r.Path)]++
	}
	var keys []string
	for k, n := range counts {
		keys = append(keys, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(keys)
	trips := githubsim.RoundTrips(reqs)
	if testing.Verbose() && len(reqs) > 0 {
		t0 := reqs[0].Start
		for _, r := range reqs {
			if r.Start.Before(t0) {
				t0 = r.Start
			}
		}
		for _, r := range reqs {
			t.Logf("  %5d–%5d ms %s %s", r.Start.Sub(t0).Milliseconds(), r.End.Sub(t0).Milliseconds(), r.Method, shape(r.Path))
		}
	}
	return o, len(reqs), trips, strings.Join(keys, ", ")
}

// requestsOf is every request run o made. Run returned, so each was
// answered: the log has it.
func (h *harness) requestsOf(o outcome) []githubsim.LoggedRequest {
	var reqs []githubsim.LoggedRequest
	for _, r := range h.sim.Requests() {
		if r.Token == "tok-"+o.runID {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// shape drops ids from a path: /repos/o/r/git/commits/<sha> → git/commits,
// and names a push (git-receive-pack) "push".
func shape(p string) string {
	if strings.HasSuffix(p, ".git/git-receive-pack") {
		return "push"
	}
	segs := strings.Split(strings.TrimPrefix(p, "/repos/acme/control/"), "/")
	if len(segs) >= 2 && segs[0] == "git" {
		return "git/" + segs[1]
	}
	return segs[0]
}

// latency is added to every request while TestRequestCounts measures, so
// requests made together overlap and dependent ones do not (on the
// synctest bubble's clock: it costs no wall time).
const latency = 250 * time.Millisecond

// TestRequestCounts pins how many API requests each kind of run makes and
// how many sequential round trips they take (no other jobs'
// refs present, so each sweep costs one listing; stale shard refs are
// swept by a sharded job's first shard's run and one other run in
// ShardSweepOneIn, old job states looked at in one run in
// StateSweepOneIn: the marker, and without it a slice). No request needs
// more than a workflow token (no GET /user).
func TestRequestCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("request counts at an added latency: make test and make bench run them")
	}
	t.Parallel()
	// In a synctest bubble with the simulator in memory, the latency passes
	// on the bubble's clock: requests made together start at the same
	// instant however loaded the machine is (on a socket and the wall
	// clock, a starved goroutine's request could start after its sibling's
	// answer and count as a round trip more).
	synctest.Test(t, testRequestCounts)
}

func testRequestCounts(t *testing.T) {
	h := newHarnessInMemory(t)
	h.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: latency})
	small := events(t, transport.JobID("IC_rs"), contextFor("IC_rs", 100))
	o, n, trips, detail := requestsOf(t, h, small[0])
	require.NoError(t, o.err)
	t.Logf("agent_small run: %d requests, %d round trips (%s)", n, trips, detail)
	// the job state (one push) with the opt-out list; the log issue, with
	// no listing first: the run made the job's state on its first attempt
	// (the thread's repository ids come from the context, not a request);
	// no sweep drawn
	assert.Equal(t, 3, n)
	assert.LessOrEqual(t, trips, 3)
	assert.NotContains(t, detail, "user")
	assert.NotContains(t, detail, "GET issues")
	// a run that drew the job states' sweep reads the sweep marker
	// (missing) and lists its slice of the states (none there), beside
	seed, _ := seedWhere(t, func(d draws) bool { return d.states && !d.shards })
	sampled := events(t, transport.JobID("IC_rss"), contextFor("IC_rss", 100))
	o, n, trips, detail = requestsOf(t, h, sampled[0], withSeed(seed))
	require.NoError(t, o.err)
	require.NotNil(t, o.res.StateSweep)
	t.Logf("agent_small run sweeping job states: %d requests, %d round trips (%s)", n, trips, detail)
	assert.Equal(t, 5, n)
	assert.LessOrEqual(t, trips, 3)

	for _, total := range []int{3, 20} {
		h := newHarnessInMemory(t) // no other job's refs for the sweep to inspect
		node := fmt.Sprintf("IC_r%d", total)
		pad := map[int]int{3: 120_000, 20: 900_000}[total]
		ev := events(t, transport.JobID(node), contextFor(node, pad))
		require.Equal(t, total, len(ev))
		for i := 0; i < total-1; i++ {
			if i == 0 { // only the runs measured wait for the latency
				h.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: latency})
			}
			o, n, trips, detail := requestsOf(t, h, ev[i])
			require.NoError(t, o.err)
			if i == 0 {
				h.sim.ClearFaults()
				t.Logf("%d shards, a waiting shard run: %d requests, %d round trips (%s)", total, n, trips, detail)
				assert.Equal(t, 3, n) // the piece (one push), listing, sweep listing
			}
		}
		h.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: latency})
		o, n, trips, detail := requestsOf(t, h, ev[total-1])
		require.NoError(t, o.err)
		require.True(t, o.res.Ready)
		t.Logf("%d shards, the proceeding run: %d requests, %d round trips (%s)", total, n, trips, detail)
		// the piece (one push), listing; the other shards' commits (the
		// lock and state commits are made locally); the lock (one push)
		// with their blobs; the state (one push) with the opt-out list
		// and the log issue listing; the log issue (the first shard's run
		// swept)
		assert.Equal(t, 2+(total-1)+1+(total-1)+3+1, n)
		assert.LessOrEqual(t, trips, 8)
		assert.NotContains(t, detail, "user")

		h.sim.ClearFaults()
		o, n, trips, detail = requestsOf(t, h, ev[0])
		require.NoError(t, o.err)
		t.Logf("%d shards, a late duplicate after the lock: %d requests, %d round trips (%s)", total, n, trips, detail)
	}
}
