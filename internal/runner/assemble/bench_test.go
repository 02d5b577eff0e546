package assemble

import (
	"fmt"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/stretchr/testify/require"
)

// BenchmarkAssemble20Shards times the run that stores the last of 20
// shards, wins the lock, reads the other 19 back through the simulator,
// validates the ~920 KB context and opens the log issue. The 19 earlier
// shard runs are set up outside the timer.
func BenchmarkAssemble20Shards(b *testing.B) {
	h := newHarness(b)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		node := fmt.Sprintf("IC_bench%d", i)
		c := contextFor(node, 900_000)
		ev := events(b, transport.JobID(node), c)
		require.Equal(b, 20, len(ev))
		for k := 0; k < 19; k++ {
			require.NoError(b, h.run(b, ev[k]).err)
		}
		b.StartTimer()
		o := h.run(b, ev[19])
		b.StopTimer()
		require.NoError(b, o.err)
		require.True(b, o.res.Ready)
		b.SetBytes(int64(len(c)))
		b.StartTimer()
	}
}

// BenchmarkAssembleRequests reports what one assemble run costs in API
// requests and sequential round trips (latency on every request, as
// TestRequestCounts): "small" is an agent_small event, "shards20" the run
// that stores the last of 20 shards and proceeds (the 19 earlier runs are
// not measured). make bench shows both against their goals.
func BenchmarkAssembleRequests(b *testing.B) {
	for _, bc := range []struct {
		name string
		pad  int
	}{{"small", 100}, {"shards20", 900_000}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b)
			var requests, trips int
			n := 0
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				node := fmt.Sprintf("IC_req%s%d", bc.name, i)
				ev := events(b, transport.JobID(node), contextFor(node, bc.pad))
				for k := 0; k < len(ev)-1; k++ {
					require.NoError(b, h.run(b, ev[k]).err)
				}
				h.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: latency})
				b.StartTimer()
				o := h.run(b, ev[len(ev)-1])
				b.StopTimer()
				h.sim.ClearFaults()
				require.NoError(b, o.err)
				require.True(b, o.res.Ready)
				reqs := h.requestsOf(o)
				requests += len(reqs)
				trips += githubsim.RoundTrips(reqs)
				n++
				b.StartTimer()
			}
			b.ReportMetric(float64(requests)/float64(n), "requests/run")
			b.ReportMetric(float64(trips)/float64(n), "roundtrips/run")
		})
	}
}
