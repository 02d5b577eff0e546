package fakeclock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  func(c *Clock) error
		want time.Time
		err  error
	}{
		{"sleep advances", func(c *Clock) error { return c.Sleep(context.Background(), time.Hour) }, t0.Add(time.Hour), nil},
		{"advance", func(c *Clock) error { c.Advance(time.Minute); return nil }, t0.Add(time.Minute), nil},
		{"negative sleep does nothing", func(c *Clock) error { return c.Sleep(context.Background(), -time.Minute) }, t0, nil},
		{"advance back", func(c *Clock) error { c.Advance(-time.Minute); return nil }, t0.Add(-time.Minute), nil},
		{"set", func(c *Clock) error { c.Set(t0.Add(-time.Hour)); return nil }, t0.Add(-time.Hour), nil},
		{"cancelled sleep still advances and reports", func(c *Clock) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return c.Sleep(ctx, time.Second)
		}, t0.Add(time.Second), context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(t0)
			assert.ErrorIs(t, tc.run(c), tc.err)
			assert.Equal(t, tc.want, c.Now())
		})
	}
}

func TestClockConcurrent(t *testing.T) {
	c := New(time.Unix(0, 0))
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Sleep(context.Background(), time.Second); _ = c.Now() }()
	}
	wg.Wait()
	assert.Equal(t, time.Unix(50, 0), c.Now())
}
