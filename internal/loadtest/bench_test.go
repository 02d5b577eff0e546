package loadtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/dispatch"
)

// benchLatency is injected on every route (githubsim slow fault).
const benchLatency = 50 * time.Millisecond

// BenchmarkDispatchMention measures one mention through the real
// dispatcher (decide, build the context, claim, dispatch, react, write the
// rate state) with 50 ms of latency on every request. "cold" is a fresh
// dispatcher per mention (event mode: one process per delivery); "warm"
// reuses one (serve/poll mode: control head, blocklist and rate state
// cached). Reported per mention: requests, sequential round trips and
// wall time.
func BenchmarkDispatchMention(b *testing.B) {
	for _, bc := range []struct {
		name    string
		prEvery int
		reuse   bool
	}{
		{"issue/cold", 0, false},
		{"issue/warm", 0, true},
		{"pr/cold", 1, false},
		{"pr/warm", 1, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := NewWorld(WorldOptions{Repos: 1, Latency: benchLatency})
			require.NoError(b, err)
			defer w.Close()
			ms, err := w.SeedMentions(b.N+1, bc.prEvery)
			require.NoError(b, err)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			d, err := w.NewDispatcher()
			require.NoError(b, err)
			handle(b, ctx, d, ms[0]) // warm-up: not measured
			w.Spans()
			var requests, trips int
			var wall time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if !bc.reuse {
					d, err = w.NewDispatcher()
					require.NoError(b, err)
				}
				b.StartTimer()
				start := time.Now()
				handle(b, ctx, d, ms[i+1])
				wall += time.Since(start)
				b.StopTimer()
				spans := w.Spans()
				requests += len(spans)
				trips += RoundTrips(spans)
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(requests)/n, "requests/mention")
			b.ReportMetric(float64(trips)/n, "roundtrips/mention")
			b.ReportMetric(float64(wall.Milliseconds())/n, "ms/mention")
		})
	}
}

func handle(b *testing.B, ctx context.Context, d *dispatch.Dispatcher, m Mention) {
	dec, err := d.Handle(ctx, m.DispatchTrigger())
	require.NoError(b, err)
	require.Equal(b, dispatch.Dispatch, dec.Decision, dec.Reason)
	require.NoError(b, d.Flush(ctx))
}
