package loadtest

import (
	"context"
	"sync"
	"time"
)

// Clock is a fake clock shared by the simulator, the pacers and the
// clients: every wait (pacing, Retry-After, backoff) advances it at once,
// so hours of rate-limited traffic run in seconds and deterministically.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the current fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep advances the clock by d instead of waiting.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.mu.Lock()
		c.t = c.t.Add(d)
		c.mu.Unlock()
	}
	return ctx.Err()
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { _ = c.Sleep(context.Background(), d) }
