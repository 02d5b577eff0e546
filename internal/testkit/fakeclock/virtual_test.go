package fakeclock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestVirtualSleepsOverlap: participants sleeping at once wait together,
// as separate processes would; time moves to each wake-up in order.
func TestVirtualSleepsOverlap(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewVirtual(t0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	woke := map[string]time.Time{}
	release := c.Hold()
	for _, p := range []struct {
		name string
		naps []time.Duration
	}{{"a", []time.Duration{time.Minute}}, {"b", []time.Duration{30 * time.Second, 20 * time.Second}}, {"c", nil}} {
		c.Go(&wg, func() {
			for _, d := range p.naps {
				assert.NoError(t, c.Sleep(context.Background(), d))
			}
			mu.Lock()
			woke[p.name] = c.Now()
			mu.Unlock()
		})
	}
	release()
	wg.Wait()
	assert.Equal(t, t0.Add(time.Minute), woke["a"])
	assert.Equal(t, t0.Add(50*time.Second), woke["b"])
	assert.Equal(t, t0, woke["c"])
	assert.Equal(t, t0.Add(time.Minute), c.Now(), "a minute passed, not the sum of the naps")
}

// TestVirtualSleepCancelled: a cancelled sleeper leaves the queue.
func TestVirtualSleepCancelled(t *testing.T) {
	c := NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	c.Go(&wg, func() {
		cancel()
		assert.ErrorIs(t, c.Sleep(ctx, time.Hour), context.Canceled)
	})
	wg.Wait()
}
