// Package fakeclock is the fake clock the tests share with the simulator,
// pacers and clients: Now reads it, and every wait (Sleep: pacing,
// Retry-After, backoff) moves it forward at once, so hours of rate-limited
// traffic run in milliseconds and deterministically. Safe for concurrent use.
//
// Concurrent processes that must wait as separate processes would (two
// writers sleeping a minute each at once take one minute, not two) run in
// a testing/synctest bubble on its clock (Bubble): time moves only when
// every goroutine in the bubble waits, those a process starts for itself
// included. (A clock that counted only the processes it is told of would
// move time while a process is mid-request whenever a goroutine of its
// own sleeps: a write would go out a minute after its slot was taken.)
package fakeclock

import (
	"context"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/clock"
)

// Clock is a fake clock.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	bubble bool
}

// New starts a clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Bubble is the clock of the testing/synctest bubble it is used in: Now
// and Sleep are the time package's, which the bubble fakes, so a write
// goes out at the instant its slot was taken, as on a real machine.
// Advance and Set sleep (a bubble's time never goes back). The bubble's
// time starts at 2000-01-01 00:00 UTC.
func Bubble() *Clock { return &Clock{bubble: true} }

// Now is the current fake time.
func (c *Clock) Now() time.Time {
	if c.bubble {
		return time.Now().UTC()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep moves the clock forward by d instead of waiting; it returns
// ctx.Err() so a cancelled caller still stops. On a bubble's clock it
// waits, as time.Sleep does there.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if c.bubble {
		return clock.Sleep(ctx, d)
	}
	if d > 0 {
		c.Advance(d)
	}
	return ctx.Err()
}

// Advance moves the clock by d (a test may move it back).
func (c *Clock) Advance(d time.Duration) {
	if c.bubble {
		time.Sleep(d)
		return
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	if c.bubble {
		time.Sleep(time.Until(t))
		return
	}
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
