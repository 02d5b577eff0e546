package assemble

import (
	"fmt"
	"testing"

	"github.com/mention-runner/mention-runner/internal/transport"
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
