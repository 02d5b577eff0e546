package writebudget

import (
	"context"
	"time"
)

// Hour reports the account's writes the ledger granted in the hour up to
// now, and the hourly limit they count against, as this handle last saw
// the ledger: at its last read or write (each grant), so it makes no
// request. ok is false until the handle has seen the ledger. The count is
// what the ledger holds: grants (the ledger's own writes in them), slots
// given back subtracted, of every process writing as the account.
func (l *Ledger) Hour() (used, limit int, ok bool) {
	l.mu.Lock()
	s, ok := l.seen, l.seenOK
	l.mu.Unlock()
	if !ok {
		return 0, 0, false
	}
	from := l.o.Now().Add(-time.Hour).UnixMilli()
	for _, g := range s.Grants {
		if g.At > from {
			used += g.N
		}
	}
	limit = l.o.PerHour
	if s.PerMinute > 0 && s.PerHour > 0 {
		limit = s.PerHour // the operator's limits committed to the ledger (SetLimits)
	}
	return used, limit, true
}

// saw records the state a read found or a write stored, for Hour.
func (l *Ledger) saw(s state) {
	now := l.o.Now()
	l.mu.Lock()
	l.seen, l.seenOK, l.seenAt = s, true, now
	l.mu.Unlock()
}

// SeenAt is when this handle last read or wrote the ledger (zero: never).
func (l *Ledger) SeenAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seenAt
}

// Refresh reads the ledger (one request when it is at the name the clock
// gives) so that Hour shows every process's grants, not only those this
// handle saw at its last grant: for a process that reports the account's
// hour while it writes little itself.
func (l *Ledger) Refresh(ctx context.Context) error {
	l.io.Lock()
	defer l.io.Unlock()
	_, _, err := l.read(ctx)
	return err
}
