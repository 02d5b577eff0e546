package writebudget

import (
	"context"
	"fmt"
	"time"
)

// held is a grant this process holds: slots left, usable from at until
// until (at + Hold).
type held struct {
	slots     int
	at, until time.Time
}

// Ready is called when the process is about to write about low times
// (the dispatcher, as it starts reading a mention's thread): when the
// grants it holds have fewer than low slots left that stay usable a
// while yet, it takes the next grant now, of at least low slots (up to
// MaxBlock), so the ledger is read and
// written while the caller does its own reads; a Take meanwhile uses the
// slots still held and then waits for this grant rather than taking one
// of its own. Ready blocks until the grant is held (run it beside the
// reads). It returns at once when enough is held or the ledger is
// unusable just now; while another grant is being taken it waits for
// that one, which gets low slots unless it was written already. Its
// error is ctx's.
func (l *Ledger) Ready(ctx context.Context, low int) error {
	l.mu.Lock()
	now := l.o.Now()
	if now.Before(l.broken) || l.usableLocked(now, l.o.Hold/3) >= low {
		l.mu.Unlock()
		return nil
	}
	l.want = max(l.want, low)
	ch := l.inflight
	if ch == nil {
		return l.reserveHeld(ctx) // unlocks
	}
	// the grant being taken is sized for low unless it was written
	// already (then the next Ready catches up): wait for it
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take is Take: one slot of a held grant, else the grant being taken,
// else a new one.
func (l *Ledger) take(ctx context.Context) error {
	l.mu.Lock()
	for {
		now := l.o.Now()
		if h := l.useLocked(now); h != nil {
			at := h.at
			l.mu.Unlock()
			if d := at.Sub(l.o.Now()); d > 0 {
				if err := l.o.Sleep(ctx, d); err != nil {
					return fmt.Errorf("writebudget: waiting for the account's next write slot: %w", err)
				}
			}
			return nil
		}
		if now.Before(l.broken) {
			l.mu.Unlock()
			return nil // pacing alone for now (see Options.Warn)
		}
		if ch := l.inflight; ch != nil {
			if l.onCreditLocked(ctx) {
				l.mu.Unlock()
				return nil
			}
			l.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("writebudget: waiting for the account's next write slot: %w", ctx.Err())
			}
			l.mu.Lock()
			continue
		}
		if err := l.reserveHeld(ctx); err != nil { // unlocks
			return err
		}
		l.mu.Lock()
	}
}

// useLocked drops spent and expired grants and takes one slot of the
// oldest grant left (the first to expire), or returns nil.
func (l *Ledger) useLocked(now time.Time) *held {
	l.expireLocked(now)
	if len(l.held) == 0 {
		return nil
	}
	h := l.held[0]
	h.slots--
	return h
}

// usableLocked counts the slots held that are usable for at least margin.
func (l *Ledger) usableLocked(now time.Time, margin time.Duration) int {
	n := 0
	for _, h := range l.held {
		if now.Add(margin).Before(h.until) {
			n += h.slots
		}
	}
	return n
}

// nextBlockLocked sizes the next grant: twice the last one (up to
// MaxBlock) while the last is still running, so the process uses its
// grants up faster than they expire; back to Block when the last one
// expired with slots unused.
func (l *Ledger) nextBlockLocked(now time.Time) int {
	switch {
	case l.last == nil:
	case now.Before(l.last.until):
		l.block = min(2*l.block, l.o.MaxBlock)
	case l.last.slots > 0:
		l.block = l.o.Block
	}
	return l.block
}

// reserveHeld takes a grant (nextBlockLocked's size, or what Ready asked
// for, up to MaxBlock) and holds it. Called with l.mu held, which it
// releases: the ledger is read and written under l.io only, and anyone
// needing a slot meanwhile waits on l.inflight. Its error is ctx's; a
// ledger that fails otherwise leaves the process pacing alone for
// retryBroken (Options.Warn hears why).
func (l *Ledger) reserveHeld(ctx context.Context) error {
	take := l.beginReserveLocked()
	l.mu.Unlock()
	return take(ctx)
}

// beginReserveLocked marks a grant as being taken (l.inflight) and
// returns what takes it, to be called without l.mu.
func (l *Ledger) beginReserveLocked() func(ctx context.Context) error {
	now := l.o.Now()
	block := l.nextBlockLocked(now)
	ch := make(chan struct{})
	l.inflight, l.pendingCh = ch, make(chan struct{})
	return func(ctx context.Context) error { return l.takeGrant(ctx, now, block, ch) }
}

// takeGrant takes the grant beginReserveLocked began (see reserveHeld).
func (l *Ledger) takeGrant(ctx context.Context, now time.Time, block int, ch chan struct{}) error {
	n := block
	size := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		n = max(block, min(l.want, l.o.MaxBlock))
		return n
	}
	l.io.Lock()
	at, after, err := l.reserve(ctx, size)
	if after == nil {
		l.io.Unlock()
	} else {
		// held (below): writes waiting for it go out while the rotation
		// is finished in the background, still under l.io (the next
		// grant reads after it). Not cut short by ctx: a generation
		// left closed and unopened costs the next reader its opening.
		go func() {
			defer l.io.Unlock()
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterTimeout)
			defer cancel()
			after(actx)
		}()
	}

	l.mu.Lock()
	l.inflight = nil
	close(ch)
	if l.pendingCh != nil {
		close(l.pendingCh)
		l.pendingCh = nil
	}
	switch {
	case err == nil:
		l.want = 0
		// a write taken on credit used one of its slots already
		h := &held{slots: max(n-l.credited, 0), at: at, until: at.Add(l.o.Hold)}
		l.credited = 0
		l.held = append(l.held, h)
		l.last = h
	case ctx.Err() != nil:
		l.mu.Unlock()
		return err
	default:
		l.broken = now.Add(retryBroken)
	}
	l.mu.Unlock()
	if err != nil && l.o.Warn != nil {
		l.o.Warn(fmt.Errorf("%w; this process paces itself alone for %s", err, retryBroken))
	}
	return nil
}

// afterTimeout bounds finishing a rotation after its grant is held.
const afterTimeout = time.Minute

// Idle waits until no grant is being taken or finished by this handle (a
// rotation's opening, deletions: see reserve): a process about to exit
// calls it so the next one does not pay for them. l.io is held by every
// ledger read and write and by a rotation finished in the background, but
// let go while a grant waits for room (sleepUnlocked): that grant is
// waited for by its l.inflight.
func (l *Ledger) Idle() {
	for {
		l.io.Lock()
		l.mu.Lock()
		ch := l.inflight
		l.mu.Unlock()
		l.io.Unlock()
		if ch == nil {
			return
		}
		<-ch
	}
}
