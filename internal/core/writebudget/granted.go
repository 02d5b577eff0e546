package writebudget

import (
	"context"
	"fmt"
	"time"
)

// Grant is the commit that recorded one of this handle's grants in the
// ledger. A dispatcher claims mentions with it (the claim ref points at
// it, refstate reads it as claimed by Holder since At) instead of making a
// claim commit of its own: a fresh process's first claim then waits for
// no commit of its own after its grant.
type Grant struct {
	Commit string
	At     time.Time // the commit's date (whole seconds)
	Holder string    // Options.Holder
}

// Granted waits, as Take does but without using a slot, until this handle
// holds a grant with a slot left (or paces alone: the ledger unusable),
// and returns the commit of its latest grant; ok is false when it has
// none. A grant being taken (by Ready) is waited for only when no slot is
// held (the caller's next write would wait for it anyway), and only until
// its commit is made: that commit is returned while its ref update is in
// flight, so a write marked OnCredit (credit.go) can go beside it.
func (l *Ledger) Granted(ctx context.Context) (g Grant, ok bool, err error) {
	l.mu.Lock()
	for {
		now := l.o.Now()
		l.expireLocked(now)
		if len(l.held) > 0 || now.Before(l.broken) {
			g = l.granted
			l.mu.Unlock()
			return g, g.Commit != "", nil
		}
		if ch := l.inflight; ch != nil {
			if l.pending.Commit != "" {
				g = l.pending
				l.mu.Unlock()
				return g, true, nil
			}
			made := l.pendingCh
			l.mu.Unlock()
			select {
			case <-ch:
			case <-made:
			case <-ctx.Done():
				return Grant{}, false, fmt.Errorf("writebudget: waiting for the account's next grant: %w", ctx.Err())
			}
			l.mu.Lock()
			continue
		}
		// take one, and return its commit as soon as it is made: the
		// grant is finished in the background (not cut short by ctx: a
		// write waiting for it uses it)
		take := l.beginReserveLocked()
		go func() {
			gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grantTimeout)
			defer cancel()
			_ = take(gctx) // a failure leaves the process pacing alone
		}()
	}
}

// grantTimeout bounds a grant Granted finishes in the background.
const grantTimeout = 2 * time.Minute

// OwnGrants reports true to its first caller only, which may then use this
// handle's grant commits as its own claim commits: a claim commit must be
// one claimer's (see Grant).
func (l *Ledger) OwnGrants() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.grantsOwned {
		return false
	}
	l.grantsOwned = true
	return true
}
