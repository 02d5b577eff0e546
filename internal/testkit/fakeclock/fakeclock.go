// Package fakeclock is the fake clock the tests share with the simulator,
// pacers and clients: Now reads it, and every wait (Sleep: pacing,
// Retry-After, backoff) moves it forward at once, so hours of rate-limited
// traffic run in milliseconds and deterministically. Safe for concurrent use.
package fakeclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a fake clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New starts a clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the current fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep moves the clock forward by d instead of waiting; it returns
// ctx.Err() so a cancelled caller still stops.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.Advance(d)
	}
	return ctx.Err()
}

// Advance moves the clock by d (a test may move it back).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
