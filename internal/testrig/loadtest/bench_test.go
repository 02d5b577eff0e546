package loadtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

// benchLatency is injected on every route (githubsim slow fault).
const benchLatency = 50 * time.Millisecond

// BenchmarkDispatchMention measures one mention through the real
// dispatcher (decide, build the context, claim, dispatch, mark dispatched,
// react, write the rate state) with 50 ms of latency on every request,
// wired as cmd/dispatcher wires it: every write also takes a slot of the
// account's write ledger in CONTROL (writebudget), whose requests count.
// "cold" is a fresh dispatcher per mention, as `dispatcher event` runs one
// process per delivery (FlushEach: the rate state is written in Handle's
// last step; its first write waits for its first grant). "warm" reuses
// one, as `dispatcher serve` does, mentions back to back (blocklist, rate
// state and claim commit cached, the next grant taken beside a mention's
// reads while slots are still held; the rate state is written by
// FlushEvery once per CacheTTL, not per mention: it is measured apart, as
// ratewrites/mention over the run). "idle" is warm with a minute between
// mentions: the grant, the blocklist and the rate state have expired, so
// each mention reads them again and waits for a grant. Reported per
// mention: requests, sequential round trips and wall time. The trigger is
// the webhook's (repository and issue from the payload). Warm runs flush
// the rate state between mentions once CacheTTL has passed on the world's
// clock, as FlushEvery does beside serve (counted in ratewrites/mention).
func BenchmarkDispatchMention(b *testing.B) {
	for _, bc := range []struct {
		name    string
		prEvery int
		reuse   bool
		idle    time.Duration
	}{
		{"issue/cold", 0, false, 0},
		{"issue/cold-hour", 0, false, time.Hour},   // each the first mention of its hour
		{"issue/cold-2h", 0, false, 2 * time.Hour}, // one mention every 2 h
		{"issue/warm", 0, true, 0},
		{"issue/idle", 0, true, time.Minute},
		{"pr/cold", 1, false, 0},
		{"pr/warm", 1, true, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			requests, trips, rateWrites, wall := measureMentions(b, b.N, bc.prEvery, bc.reuse, bc.idle)
			n := float64(b.N)
			b.ReportMetric(float64(requests)/n, "requests/mention")
			b.ReportMetric(float64(trips)/n, "roundtrips/mention")
			b.ReportMetric(float64(rateWrites)/n, "ratewrites/mention")
			b.ReportMetric(float64(wall.Milliseconds())/n, "ms/mention")
		})
	}
}

// measureMentions handles n mentions (after one unmeasured warm-up), idle
// apart on the world's clock, and returns the requests and round trips they made, the rate-state writes a
// final Flush made (warm only: cold ones write it in Handle), and the wall
// time.
func measureMentions(tb testing.TB, n, prEvery int, reuse bool, idle time.Duration) (requests, trips, rateWrites int, wall time.Duration) {
	w, err := NewWorld(WorldOptions{Repos: 1, Latency: benchLatency})
	require.NoError(tb, err)
	defer w.Close()
	w.SharedBudget = true // as cmd/dispatcher wires it: every write takes a slot of the account's ledger
	ms, err := w.SeedMentions(n+1, prEvery)
	require.NoError(tb, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(tb, w.LedgerAtWindow(ctx))
	event := func(c *dispatch.Config) { c.FlushEach = !reuse }
	d, err := w.NewDispatcher(event)
	require.NoError(tb, err)
	handle(tb, ctx, d, ms[0]) // warm-up: not measured
	require.NoError(tb, d.Flush(ctx))
	w.Spans()
	b, _ := tb.(*testing.B)
	timer := func(on bool) {
		if b != nil && on {
			b.StartTimer()
		} else if b != nil {
			b.StopTimer()
		}
	}
	timer(false)
	flushed := w.Clock.Now()
	for i := 0; i < n; i++ {
		if !reuse {
			d, err = w.NewDispatcher(event)
			require.NoError(tb, err)
		}
		if reuse && (idle > 0 || w.Clock.Now().Sub(flushed) >= dispatch.DefaultCacheTTL) {
			require.NoError(tb, d.Flush(ctx)) // as FlushEvery does meanwhile, every CacheTTL
			rateWrites += len(w.Spans())
			flushed = w.Clock.Now()
		}
		if idle > 0 {
			w.Clock.Advance(idle)
		}
		timer(true)
		start := time.Now()
		handle(tb, ctx, d, ms[i+1])
		wall += time.Since(start)
		timer(false)
		spans := w.Spans()
		requests += len(spans)
		trips += RoundTrips(spans)
		if !reuse {
			require.NoError(tb, d.Flush(ctx))
			require.Empty(tb, w.Spans(), "event mode writes the rate state in Handle")
		}
	}
	require.NoError(tb, d.Flush(ctx))
	rateWrites += len(w.Spans())
	timer(true)
	return requests, trips, rateWrites, wall
}

func handle(tb testing.TB, ctx context.Context, d *dispatch.Dispatcher, m Mention) {
	dec, err := d.Handle(ctx, m.DispatchTrigger())
	require.NoError(tb, err)
	require.Equal(tb, dispatch.Dispatch, dec.Decision, dec.Reason)
}
