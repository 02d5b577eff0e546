package ghclient

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/clock"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
)

// assertWindows checks that no window of length w holds more than n grants.
func assertWindows(t *testing.T, grants []time.Time, n int, w time.Duration) {
	t.Helper()
	for i := 0; i+n < len(grants); i++ {
		if gap := grants[i+n].Sub(grants[i]); gap < w {
			t.Fatalf("grants %d and %d are %s apart: more than %d in %s", i, i+n, gap, n, w)
		}
	}
}

func TestPacerBurst(t *testing.T) {
	cases := []struct {
		name      string
		perMinute int
		perHour   int
		gap       time.Duration
		calls     int
		wantLast  time.Duration // last grant, from the start
	}{
		{"80/min over a burst of 500", 80, 500, -1, 500, 6 * time.Minute},
		{"hour limit: the 501st waits an hour", 80, 500, -1, 501, time.Hour},
		{"gap only", -1, -1, time.Second, 10, 9 * time.Second},
		{"gap and minute", 3, -1, 10 * time.Second, 7, 2*time.Minute + 0*time.Second},
		{"defaults", 0, 0, 0, 100, 99 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(epoch)
			p := NewPacer(c.perMinute, c.perHour, c.gap, clk.Now, clk.Sleep)
			var grants []time.Time
			for range c.calls {
				require.NoError(t, p.Wait(context.Background()))
				grants = append(grants, clk.Now())
			}
			pm, ph := c.perMinute, c.perHour
			if pm == 0 {
				pm, ph = DefaultWritesPerMinute, DefaultWritesPerHour
			}
			if pm > 0 {
				assertWindows(t, grants, pm, time.Minute)
			}
			if ph > 0 {
				assertWindows(t, grants, ph, time.Hour)
			}
			gap := c.gap
			if gap == 0 {
				gap = DefaultWriteGap
			}
			for i := 1; i < len(grants); i++ {
				require.GreaterOrEqual(t, grants[i].Sub(grants[i-1]), max(gap, 0))
			}
			assert.Equal(t, c.wantLast, grants[len(grants)-1].Sub(epoch))
		})
	}
}

func TestPacerConcurrent(t *testing.T) {
	// The clock stands still; each caller's grant is now + its wait.
	var mu sync.Mutex
	var grants []time.Time
	p := NewPacer(80, 500, -1, func() time.Time { return epoch }, func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		grants = append(grants, epoch.Add(d))
		mu.Unlock()
		return nil
	})
	var wg sync.WaitGroup
	for range 300 {
		wg.Go(func() { _ = p.Wait(context.Background()) })
	}
	wg.Wait()
	// the first 80 need no sleep; the rest were all recorded
	require.Len(t, grants, 300-80)
	for range 80 {
		grants = append(grants, epoch)
	}
	slices.SortFunc(grants, func(a, b time.Time) int { return a.Compare(b) })
	assertWindows(t, grants, 80, time.Minute)
	assert.Equal(t, 3*time.Minute, grants[len(grants)-1].Sub(epoch))
}

func TestPacerCancelled(t *testing.T) {
	clk := fakeclock.New(epoch)
	p := NewPacer(1, -1, -1, clk.Now, clock.Sleep)
	require.NoError(t, p.Wait(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.Wait(ctx), context.Canceled)

	// a cancelled request is not sent
	f := newFixture(t, Options{Pacer: p}, ok)
	require.ErrorIs(t, f.post(ctx, "x"), context.Canceled)
	assert.Zero(t, f.script.count())
}

func TestAsRateLimitFromGoGitHub(t *testing.T) {
	reset := epoch.Add(5 * time.Second)
	limited := status(403, "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	f := newFixture(t, Options{MaxRetries: -1}, limited)
	err := f.get(context.Background())
	var ghErr *github.RateLimitError
	require.ErrorAs(t, err, &ghErr)
	rl, ok := AsRateLimit(err, func() time.Time { return epoch })
	require.True(t, ok)
	assert.False(t, rl.Secondary)
	assert.True(t, reset.Equal(rl.Reset))
	assert.Equal(t, 5*time.Second, rl.Wait)
	assert.Equal(t, "GET", rl.Method)

	_, ok = AsRateLimit(context.Canceled, nil)
	assert.False(t, ok)
}

func BenchmarkPacerWait(b *testing.B) {
	p := NewPacer(80, 500, -1, func() time.Time { return epoch }, func(context.Context, time.Duration) error { return nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Wait(ctx)
	}
}

// recordingBudget is an AccountBudget that records what it is told.
type recordingBudget struct {
	mu     sync.Mutex
	takes  int
	pauses []time.Time
}

func (b *recordingBudget) Take(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.takes++
	return ctx.Err()
}

func (b *recordingBudget) SlowDown(_ context.Context, until time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pauses = append(b.pauses, until)
	return nil
}

// TestPacerSharesTheBudget: every grant also takes a slot of the shared
// budget, and a slow-down holds this pacer's next grants and reaches the
// budget (the account's other processes).
func TestPacerSharesTheBudget(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := &recordingBudget{}
	p := NewPacer(0, 0, -1, clk.Now, clk.Sleep).Share(b)
	ctx := context.Background()
	require.NoError(t, p.Wait(ctx))
	until := clk.Now().Add(90 * time.Second)
	require.NoError(t, p.SlowDown(ctx, until))
	require.NoError(t, p.Wait(ctx))
	assert.Equal(t, until, clk.Now(), "the next write waited for the slow-down")
	assert.Equal(t, 2, b.takes)
	assert.Equal(t, []time.Time{until}, b.pauses)
}

// TestSecondaryLimitSlowsEveryWriter: a secondary limit answered to one
// request is passed to the pacer, so the process's other writes and the
// account's shared budget wait too.
func TestSecondaryLimitSlowsEveryWriter(t *testing.T) {
	b := &recordingBudget{}
	p := NewPacer(0, 0, -1, func() time.Time { return epoch }, func(ctx context.Context, d time.Duration) error { return ctx.Err() }).Share(b)
	f := newFixture(t, Options{Pacer: p}, status(403, "Retry-After", "30"), ok)
	require.NoError(t, f.post(context.Background(), "hi"))
	assert.Equal(t, []time.Time{epoch.Add(30 * time.Second)}, b.pauses)
	assert.Equal(t, 2, b.takes, "each attempt took a slot")
}

// TestPacerHour: Hour counts the writes of the rolling hour up to now,
// one a second apart, and says the hourly limit.
func TestPacerHour(t *testing.T) {
	type burst struct {
		writes int
		then   time.Duration // the clock moves on after the burst
	}
	for _, tc := range []struct {
		name              string
		perHour           int
		bursts            []burst
		wantUsed, wantLim int
	}{
		{"none yet", 0, nil, 0, DefaultWritesPerHour},
		{"one burst", 0, []burst{{10, 0}}, 10, DefaultWritesPerHour},
		{"aged out", 0, []burst{{10, time.Hour}}, 0, DefaultWritesPerHour},
		{"half aged out", 0, []burst{{5, 30 * time.Minute}, {5, 31 * time.Minute}}, 5, DefaultWritesPerHour},
		{"no hourly limit", -1, []burst{{3, 0}}, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := fakeclock.New(epoch)
			p := NewPacer(0, tc.perHour, time.Second, clk.Now, clk.Sleep)
			for _, b := range tc.bursts {
				for range b.writes {
					require.NoError(t, p.Wait(context.Background()))
				}
				clk.Advance(b.then)
			}
			used, limit := p.Hour()
			assert.Equal(t, tc.wantUsed, used)
			assert.Equal(t, tc.wantLim, limit)
		})
	}
}
