// Package clock waits for a duration while honouring cancellation.
package clock

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever comes first, and returns
// ctx.Err() in the second case. A cancelled context wins even when d <= 0,
// so a loop that sleeps between tries always notices shutdown.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
