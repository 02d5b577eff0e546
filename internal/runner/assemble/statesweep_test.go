package assemble

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
)

// seeder writes job states and the sweep marker straight to CONTROL, as
// other jobs and the dispatcher do.
type seeder struct {
	h    *harness
	rs   *refstate.Store
	push *refpush.Client
}

func newSeeder(t testing.TB, h *harness) seeder {
	t.Helper()
	h.sim.AddToken("tok-seed", "mr-runner")
	gh := h.sim.Client("tok-seed")
	p, err := refpush.New(gh.Client(), h.sim.URL(), "tok-seed")
	require.NoError(t, err)
	rs, err := refstate.New(gh, control, h.clock.Now)
	require.NoError(t, err)
	rs.Push = p
	return seeder{h: h, rs: rs, push: p}
}

// states makes n job states dated now, each with a commit of its own,
// 100 a push: jobids spread over every slice (prefix "") or all starting
// with prefix.
func (s seeder) states(t testing.TB, prefix string, n int) []string {
	t.Helper()
	var refs []string
	for start := 0; start < n; start += refpush.DefaultMaxUpdates {
		var commits []refpush.Commit
		var ups []refpush.Update
		for i := start; i < min(n, start+refpush.DefaultMaxUpdates); i++ {
			id := transport.JobID(fmt.Sprintf("IC_seed_%s_%d_%d", prefix, i, s.h.clock.Now().Unix()))
			if prefix != "" {
				id = prefix + id[len(prefix):]
			}
			c := refpush.Commit{Tree: refstate.EmptyTree, Message: "mention-runner state: running\n\nholder: run seed-" + id + "\n",
				Sig: refpush.Signature{Name: "mention-runner", Email: "mention-runner@users.noreply.github.com", At: s.h.clock.Now().Truncate(time.Second)}}
			commits = append(commits, c)
			ups = append(ups, refpush.Update{Ref: jobstate.Ref(id), New: c.SHA()})
			refs = append(refs, jobstate.Ref(id))
		}
		errs, err := s.push.Push(context.Background(), control, commits, ups)
		require.NoError(t, err)
		for _, e := range errs {
			require.NoError(t, e)
		}
	}
	return refs
}

// marker sets the sweep marker as a dispatcher's sweep does, dated now.
func (s seeder) marker(t testing.TB) {
	t.Helper()
	require.NoError(t, s.rs.MarkShared(context.Background(), contract.SweepMarkerRef, contract.SweepMarkerStatus, ""))
}

// sweepRequests counts what a run spent on sweeps: its reads of the git
// data API (listings, the marker, commits) and its pushes but the one of
// its job's state.
func sweepRequests(h *harness, o outcome) int {
	n := -1
	for _, r := range h.requestsOf(o) {
		own := strings.Contains(r.Path, "matching-refs/mention-runner/jobs/")
		switch {
		case own: // a shard run's listing of its job's refs
		case r.Method == http.MethodGet && strings.Contains(r.Path, "/git/"):
			n++
		case r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git-receive-pack"):
			n++
		}
	}
	return n
}

// seedWhere is the first seed of a run's Options.Rand (as the harness
// makes it) whose draws want accepts.
func seedWhere(t testing.TB, want func(draws) bool) (uint64, draws) {
	t.Helper()
	for seed := uint64(1); seed < 10_000; seed++ {
		if d := drawRand(rand.New(rand.NewPCG(seed, seed+1))); want(d) {
			return seed, d
		}
	}
	t.Fatal("no seed draws that")
	return 0, draws{}
}

// TestStateSweepFallback: old job states are looked at only by the runs
// that drew it and have their job's whole context; they read the
// dispatcher's sweep marker and sweep nothing while it is fresh, and
// otherwise one slice of the states.
func TestStateSweepFallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		drawn    bool
		waiting  bool          // the run is a shard's that waits for the others
		marker   time.Duration // the marker's age before the run; 0 = none
		read     bool          // the marker read
		swept    bool          // the drawn slice listed and its old state deleted
		requests int           // sweep requests
	}{
		{name: "drawn, no marker: the slice swept", drawn: true, read: true, swept: true, requests: 1 + 1 + 2 + 1},
		{name: "drawn, a fresh marker: one request", drawn: true, marker: 47 * time.Hour, read: true, requests: 1},
		{name: "drawn, a stale marker: the slice swept", drawn: true, marker: 49 * time.Hour, read: true, swept: true, requests: 2 + 1 + 2 + 1},
		{name: "not drawn: nothing read", requests: 0},
		{name: "drawn, but a shard run waiting for the others: nothing read", drawn: true, waiting: true, requests: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			s := newSeeder(t, h)
			seed, d := seedWhere(t, func(d draws) bool { return d.states == tc.drawn && !d.shards })
			old, other := s.states(t, d.slice, 1)[0], s.states(t, "", 1)[0]
			if strings.HasPrefix(strings.TrimPrefix(other, jobstate.RefPrefix), d.slice) {
				t.Skip("the other state fell in the slice")
			}
			h.clock.Advance(8 * 24 * time.Hour)
			young := s.states(t, d.slice, 1)[0]
			if tc.marker > 0 {
				h.clock.Advance(-tc.marker)
				s.marker(t)
				h.clock.Advance(tc.marker)
			}
			ev := events(t, transport.JobID("IC_now"), contextFor("IC_now", 10))[0]
			if tc.waiting {
				ev = events(t, transport.JobID("IC_now"), contextFor("IC_now", 120_000))[1]
			}
			o := h.run(t, ev, withSeed(seed))
			require.NoError(t, o.err)
			assert.Equal(t, !tc.waiting, o.res.Ready)
			var listed, markerRead bool
			for _, r := range h.requestsOf(o) {
				listed = listed || strings.Contains(r.Path, "matching-refs/"+strings.TrimPrefix(jobstate.RefPrefix, "refs/"))
				markerRead = markerRead || strings.HasSuffix(r.Path, strings.TrimPrefix(contract.SweepMarkerRef, "refs/"))
			}
			assert.Equal(t, tc.read, markerRead, "the marker read")
			assert.Equal(t, tc.swept, listed, "the job states listed")
			assert.Equal(t, tc.read && !tc.swept, o.res.DispatcherSweeps)
			assert.Equal(t, tc.requests, sweepRequests(h, o), "sweep requests")
			states := h.sim.Refs(control, jobstate.RefPrefix)
			assert.Contains(t, states, young)
			assert.Contains(t, states, other, "another slice's state is left for another run")
			if tc.swept {
				require.NotNil(t, o.res.StateSweep)
				assert.Equal(t, []string{old}, o.res.StateSweep.Deleted)
				assert.Equal(t, 2, o.res.StateSweep.Listed, "the slice, not every state")
				assert.NotContains(t, states, old)
			} else {
				assert.Nil(t, o.res.StateSweep)
				assert.Contains(t, states, old)
			}
		})
	}
}

// TestSweepsAtScale: with 2,000 live job states, runs drawing by their
// job's id spend on average at most 0.2 requests a run on sweeps while a
// dispatcher's marker is fresh; without one, a run that sweeps spends one
// listing page, at most StateSweepChecks commit reads and a push, however
// many states its slice holds.
func TestSweepsAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 job states and 100 runs")
	}
	t.Parallel()
	const live, runs = 2000, 100
	for _, tc := range []struct {
		name   string
		marker bool
	}{
		{"a fresh marker", true},
		{"no marker", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			s := newSeeder(t, h)
			s.states(t, "", live)
			if tc.marker {
				s.marker(t)
				total, sweeping := 0, 0
				for i := range runs {
					node := fmt.Sprintf("IC_scale_%d", i)
					o := h.run(t, events(t, transport.JobID(node), contextFor(node, 10))[0], drawnByJob())
					require.NoError(t, o.err)
					require.True(t, o.res.Ready)
					n := sweepRequests(h, o)
					total += n
					if n > 0 {
						sweeping++
					}
					assert.Nil(t, o.res.StateSweep, "no job states swept while the marker is fresh")
				}
				t.Logf("%d runs: %d sweep requests (%.2f a run), %d runs made any", runs, total, float64(total)/runs, sweeping)
				assert.LessOrEqual(t, float64(total)/runs, 0.2)
				assert.Positive(t, sweeping, "some runs still look")
				assert.Len(t, h.sim.Refs(control, jobstate.RefPrefix), live+runs)
				return
			}
			// a crowded slice of old states: the sweep reads only its bound
			seed, d := seedWhere(t, func(d draws) bool { return d.states && !d.shards })
			crowd := s.states(t, d.slice, 2*StateSweepChecks)
			h.clock.Advance(8 * 24 * time.Hour)
			o := h.run(t, events(t, transport.JobID("IC_crowd"), contextFor("IC_crowd", 10))[0], withSeed(seed))
			require.NoError(t, o.err)
			require.NotNil(t, o.res.StateSweep)
			js := o.res.StateSweep
			t.Logf("no marker: %d sweep requests; slice %s listed %d, checked %d, deleted %d", sweepRequests(h, o), d.slice, js.Listed, js.Checked, len(js.Deleted))
			assert.Equal(t, StateSweepChecks, js.Checked)
			assert.Len(t, js.Deleted, StateSweepChecks, "every state read was old")
			assert.LessOrEqual(t, js.Listed, refpush.DefaultMaxUpdates, "one listing page")
			// the marker's read (and its commit's: missing, none), one
			// listing, the bound of commits, one push
			assert.Equal(t, 1+1+StateSweepChecks+1, sweepRequests(h, o))
			assert.Len(t, h.sim.Refs(control, jobstate.RefPrefix), live+len(crowd)-StateSweepChecks+1)
		})
	}
}

// TestDraws: a job's runs draw the same sweeps from its id; across jobs
// about one in StateSweepOneIn (ShardSweepOneIn) sweeps, each slice of
// the states about as often as another; Options.Rand draws about as often.
func TestDraws(t *testing.T) {
	const n = 20_000
	states, shards := 0, 0
	slices := map[string]int{}
	for i := range n {
		id := transport.JobID(fmt.Sprintf("IC_draw_%d", i))
		d := drawJob(id)
		require.Equal(t, d, drawJob(id), "the same job, the same draws")
		if d.states {
			states++
		}
		if d.shards {
			shards++
		}
		slices[d.slice]++
	}
	assert.InDelta(t, n/StateSweepOneIn, states, 100)
	assert.InDelta(t, n/ShardSweepOneIn, shards, 100)
	assert.Len(t, slices, 256)
	for s, k := range slices {
		assert.Len(t, s, 2)
		assert.InDelta(t, n/256, k, 40, s)
	}
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, seed))
		k := 0
		for range n {
			if drawRand(rng).states {
				k++
			}
		}
		assert.InDelta(t, n/StateSweepOneIn, k, 100, "seed %d", seed)
	}
}
