package writebudget

import "time"

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
	l.mu.Lock()
	l.seen, l.seenOK = s, true
	l.mu.Unlock()
}
