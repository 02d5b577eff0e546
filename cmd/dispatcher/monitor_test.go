package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gather reads the monitor's registry as a scrape would.
func gather(t *testing.T, m *monitor) map[string]*dto.MetricFamily {
	t.Helper()
	fs, err := m.reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fs {
		out[f.GetName()] = f
	}
	return out
}

// TestClaimToDispatchBuckets: each latency the dispatcher reports lands
// in its bucket, from 50 ms to 5 min, longer ones only in +Inf.
func TestClaimToDispatchBuckets(t *testing.T) {
	m := newMonitor(time.Minute, 0)
	for _, d := range []time.Duration{40 * time.Millisecond, 50 * time.Millisecond, 800 * time.Millisecond, 3 * time.Second, 4 * time.Minute, 10 * time.Minute} {
		m.dispatched("job", d)
	}
	h := gather(t, m)["mention_runner_claim_to_dispatch_seconds"].GetMetric()[0].GetHistogram()
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	assert.Equal(t, map[float64]uint64{0.05: 2, 0.1: 2, 0.25: 2, 0.5: 2, 1: 3, 2.5: 3, 5: 4, 10: 4, 30: 4, 60: 4, 120: 4, 300: 5}, got)
	assert.Equal(t, uint64(6), h.GetSampleCount())
	assert.InDelta(t, 0.04+0.05+0.8+3+240+600, h.GetSampleSum(), 1e-9)
}

// TestWritesGauges: each identity that knows its hour shows used and
// left (left never below zero, none without a limit); one that does not
// know it yet shows nothing.
func TestWritesGauges(t *testing.T) {
	type hour struct {
		used, limit int
		ok          bool
	}
	for _, tc := range []struct {
		name string
		hour hour
		want map[string]float64 // nil: no gauge
	}{
		{"some used", hour{12, 500, true}, map[string]float64{"mention_runner_writes_used": 12, "mention_runner_writes_left": 488}},
		{"over the limit", hour{503, 500, true}, map[string]float64{"mention_runner_writes_used": 503, "mention_runner_writes_left": 0}},
		{"no limit", hour{7, 0, true}, map[string]float64{"mention_runner_writes_used": 7}},
		{"not known yet", hour{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMonitor(time.Minute, 0)
			m.writes.watch("bot", func() (int, int, bool) { return tc.hour.used, tc.hour.limit, tc.hour.ok })
			fams := gather(t, m)
			got := map[string]float64{}
			for _, name := range []string{"mention_runner_writes_used", "mention_runner_writes_left"} {
				for _, mt := range fams[name].GetMetric() {
					require.Equal(t, "bot", mt.GetLabel()[0].GetValue())
					got[name] = mt.GetGauge().GetValue()
				}
			}
			if tc.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRefresherReadsStaleLedgerOnce: a scrape that finds the ledger seen
// longer ago than the bound starts one background read, however many
// scrapes come meanwhile; a fresh ledger is not read.
func TestRefresherReadsStaleLedgerOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		age   time.Duration
		reads int32
	}{
		{"stale", 2 * time.Minute, 1},
		{"fresh", 10 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			var reads atomic.Int32
			release := make(chan struct{})
			done := make(chan struct{}, 8)
			r := &refresher{
				seen:  func() time.Time { return now.Add(-tc.age) },
				every: time.Minute, now: func() time.Time { return now },
				refresh: func(context.Context) error {
					reads.Add(1)
					<-release
					done <- struct{}{}
					return nil
				},
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(r.maybe)
			}
			wg.Wait()
			close(release)
			if tc.reads > 0 {
				<-done
			}
			assert.Equal(t, tc.reads, reads.Load())
		})
	}
}
