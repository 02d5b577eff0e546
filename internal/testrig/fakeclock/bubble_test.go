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

// TestBubble: on a bubble's clock, time does not move while a process
// works, even when a goroutine it started for itself sleeps meanwhile (the
// case a clock counting only the processes it was told of got wrong: it
// moved time to another process's wake-up mid-work); sleeps of different
// processes overlap; Advance sleeps.
func TestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Bubble()
		t0 := c.Now()
		var wg sync.WaitGroup
		var during time.Duration
		wg.Go(func() {
			var bg sync.WaitGroup
			bg.Go(func() { assert.NoError(t, c.Sleep(context.Background(), time.Minute)) })
			start := c.Now()
			for range 1000 { // work that never blocks: time must not move
				runtime.Gosched()
			}
			during = c.Now().Sub(start)
			bg.Wait()
		})
		wg.Go(func() { assert.NoError(t, c.Sleep(context.Background(), time.Second)) })
		wg.Wait()
		assert.Zero(t, during, "time moved while a process worked")
		assert.Equal(t, t0.Add(time.Minute), c.Now(), "the sleeps overlapped")
		c.Advance(time.Hour)
		assert.Equal(t, t0.Add(time.Hour+time.Minute), c.Now(), "Advance sleeps")
		c.Set(t0.Add(2 * time.Hour))
		assert.Equal(t, t0.Add(2*time.Hour), c.Now(), "Set sleeps until then")
		assert.Equal(t, time.UTC, c.Now().Location())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, c.Sleep(ctx, time.Hour), context.Canceled)
		assert.Equal(t, t0.Add(2*time.Hour), c.Now(), "a cancelled sleep returns at once")
	})
}
