// Package fakeclock is the fake clock the tests share with the simulator,
// pacers and clients: Now reads it, and every wait (Sleep: pacing,
// Retry-After, backoff) moves it forward at once, so hours of rate-limited
// traffic run in milliseconds and deterministically. Safe for concurrent use.
//
// A virtual clock (NewVirtual) lets concurrent participants (Go) wait as
// separate processes would: time advances only when every participant is
// asleep, to the earliest wake-up, so two writers sleeping a minute each at
// once take one minute, not two. It knows only its participants: the
// goroutines a participant starts for itself (a grant taken in the
// background, reads made together) are not counted, so one of them asleep
// can let time move while the participant is mid-request. Where that
// matters, run the participants in a testing/synctest bubble on its clock
// (Bubble).
package fakeclock

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/clock"
)

// Clock is a fake clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time

	virtual  bool
	bubble   bool
	active   int        // participants not asleep
	sleepers []*sleeper // by wake time
}

type sleeper struct {
	wake time.Time
	ch   chan struct{}
}

// New starts a clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// NewVirtual starts a virtual clock at t: only participants (Go) may Sleep.
func NewVirtual(t time.Time) *Clock { return &Clock{t: t, virtual: true} }

// Bubble is the clock of the testing/synctest bubble it is used in: Now
// and Sleep are the time package's, which the bubble fakes. Time moves
// only when every goroutine in the bubble is durably blocked, those the
// participants start for themselves included, so a write goes out at the
// instant its slot was taken, as on a real machine. Go starts a goroutine,
// Hold does nothing, Advance and Set sleep (a bubble's time never goes
// back). The bubble's time starts at 2000-01-01 00:00 UTC.
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
// ctx.Err() so a cancelled caller still stops. On a virtual clock it waits
// until every participant sleeps and this one is the next to wake.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if c.bubble {
		return clock.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	if !c.virtual {
		c.t = c.t.Add(d)
		c.mu.Unlock()
		return ctx.Err()
	}
	s := &sleeper{wake: c.t.Add(d), ch: make(chan struct{})}
	i := sort.Search(len(c.sleepers), func(i int) bool { return c.sleepers[i].wake.After(s.wake) })
	c.sleepers = append(c.sleepers[:i], append([]*sleeper{s}, c.sleepers[i:]...)...)
	c.active--
	c.advanceLocked()
	c.mu.Unlock()
	select {
	case <-s.ch:
		return ctx.Err()
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, o := range c.sleepers {
			if o == s {
				c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
				c.active++
				return ctx.Err()
			}
		}
		return ctx.Err() // woken meanwhile: counted awake already
	}
}

// Hold keeps a virtual clock still until the returned release is called:
// start every participant between the two, or the first to sleep moves
// time on before the others exist.
func (c *Clock) Hold() (release func()) {
	if c.bubble {
		return func() {}
	}
	c.mu.Lock()
	c.active++
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.active--
			c.advanceLocked()
			c.mu.Unlock()
		})
	}
}

// Go runs f as a participant of a virtual clock (on any clock: a goroutine
// counted by wg).
func (c *Clock) Go(wg *sync.WaitGroup, f func()) {
	if c.bubble {
		wg.Go(f)
		return
	}
	c.mu.Lock()
	c.active++
	c.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			c.mu.Lock()
			c.active--
			c.advanceLocked()
			c.mu.Unlock()
		}()
		f()
	}()
}

// advanceLocked moves a virtual clock to the next wake-up once nobody is
// awake, and wakes everyone due then.
func (c *Clock) advanceLocked() {
	if !c.virtual || c.active > 0 || len(c.sleepers) == 0 {
		return
	}
	if w := c.sleepers[0].wake; w.After(c.t) {
		c.t = w
	}
	for len(c.sleepers) > 0 && !c.sleepers[0].wake.After(c.t) {
		close(c.sleepers[0].ch)
		c.sleepers = c.sleepers[1:]
		c.active++
	}
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
