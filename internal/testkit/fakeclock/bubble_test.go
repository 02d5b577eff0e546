package fakeclock

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBubbleCountsEveryGoroutine: on a bubble's clock, time does not move
// while a participant works, even when a goroutine it started for itself
// sleeps meanwhile (on the virtual clock that goroutine counted the
// participant asleep: time jumped to another's wake-up mid-work); sleeps
// of different participants still overlap.
func TestBubbleCountsEveryGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Bubble()
		t0 := c.Now()
		var wg sync.WaitGroup
		release := c.Hold()
		var during time.Duration
		c.Go(&wg, func() {
			var bg sync.WaitGroup
			bg.Go(func() { assert.NoError(t, c.Sleep(context.Background(), time.Minute)) })
			start := c.Now()
			for range 1000 { // work that never blocks: time must not move
				runtime.Gosched()
			}
			during = c.Now().Sub(start)
			bg.Wait()
		})
		c.Go(&wg, func() { assert.NoError(t, c.Sleep(context.Background(), time.Second)) })
		release()
		wg.Wait()
		assert.Zero(t, during, "time moved while a participant worked")
		assert.Equal(t, t0.Add(time.Minute), c.Now(), "the sleeps overlapped")
		c.Advance(time.Hour)
		assert.Equal(t, t0.Add(time.Hour+time.Minute), c.Now(), "Advance sleeps")
		assert.Equal(t, time.UTC, c.Now().Location())
	})
}
