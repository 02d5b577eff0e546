package publish

import (
	"context"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
)

// writeAttempts bounds how often one write is sent after answers that may
// hide a write that landed.
const writeAttempts = 4

// writeOnce makes a write at most once. It looks for the write's marker
// first; after an error that may hide a write that landed (a network
// error, a 5xx) it looks again before sending again, so the transport
// never has to retry a POST blindly.
func (p *publisher) writeOnce(ctx context.Context, what string, find func(fresh bool) (found, bool, error), create func() (found, error)) (found, bool, error) {
	f, ok, err := find(false)
	if err != nil {
		return found{}, false, fmt.Errorf("%s: look for an earlier write: %w", what, err)
	}
	if ok {
		return f, true, nil
	}
	for attempt := 1; ; attempt++ {
		f, err = create()
		if err == nil {
			return f, false, nil
		}
		if ctx.Err() != nil || !ghclient.Ambiguous(err) || attempt >= writeAttempts {
			return found{}, false, fmt.Errorf("%s: %w", what, err)
		}
		p.logf("%s: %v; checking whether it landed before trying again", what, err)
		if serr := p.o.sleep(ctx, p.o.RetryDelay<<(attempt-1)); serr != nil {
			return found{}, false, fmt.Errorf("%s: %w", what, err)
		}
		f, ok, ferr := find(true)
		if ferr != nil {
			return found{}, false, fmt.Errorf("%s: %w (then looking for it failed: %v)", what, err, ferr)
		}
		if ok {
			return f, true, nil
		}
	}
}

// repeatIdempotent sends a write whose repetition is harmless (a PATCH
// that sets a whole body and state) again after an answer that may hide
// whether it landed, as writeOnce does for writes that need a marker.
func (p *publisher) repeatIdempotent(ctx context.Context, what string, send func() error) error {
	for attempt := 1; ; attempt++ {
		err := send()
		if err == nil || ctx.Err() != nil || !ghclient.Ambiguous(err) || attempt >= writeAttempts {
			return err
		}
		p.logf("%s: %v; sending it again (repeating it is harmless)", what, err)
		if serr := p.o.sleep(ctx, p.o.RetryDelay<<(attempt-1)); serr != nil {
			return err
		}
	}
}
