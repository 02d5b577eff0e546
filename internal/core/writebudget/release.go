package writebudget

import (
	"context"
	"time"
)

// Unused slots are given back. A grant reserves its slots for Hold; a
// process that needs fewer (a publish job's last grant, a dispatcher
// going idle) leaves them counted in the account's hour, which is what
// limits a burst (500 an hour against 80 a minute). Once a grant of this
// handle is finished (its slots spent or expired), no write of it can
// come any more, so its count in the ledger is lowered to what was used:
// at this handle's next grant (in the same commit, so for nothing), or
// by Release when the process is done.

// unused is a finished grant of this handle with slots it did not use.
type unused struct {
	at    int64 // the grant's At
	slots int
}

// expireLocked drops spent and expired grants, keeping their unused slots
// to give back.
func (l *Ledger) expireLocked(now time.Time) {
	for len(l.held) > 0 && (l.held[0].slots == 0 || !now.Before(l.held[0].until)) {
		l.retireLocked(l.held[0])
		l.held = l.held[1:]
	}
}

// retireLocked keeps the unused slots of grants no write will use.
func (l *Ledger) retireLocked(hs ...*held) {
	for _, h := range hs {
		if h.slots > 0 {
			l.unused = append(l.unused, unused{at: h.at.UnixMilli(), slots: h.slots})
		}
	}
}

// giveBack lowers this handle's finished grants in next by their unused
// slots and returns how many entries of l.unused it took (see
// gaveBackLocked). Called under l.io.
func (l *Ledger) giveBack(now time.Time, next *state) int {
	l.mu.Lock()
	l.expireLocked(now)
	todo := append([]unused(nil), l.unused...)
	l.mu.Unlock()
	for _, u := range todo {
		for i := range next.Grants {
			if g := &next.Grants[i]; g.By == l.id && g.At == u.at && g.N >= u.slots {
				g.N -= u.slots
				break
			}
		}
	}
	return len(todo)
}

// gaveBackLocked forgets the first n unused entries, now in the ledger
// (or pruned from it).
func (l *Ledger) gaveBackLocked(n int) {
	for _, u := range l.unused[:n] {
		l.returned += u.slots
	}
	l.unused = l.unused[n:]
}

// Release gives back the slots this process holds and will not use: call
// it when the process is done writing. It writes the ledger only when
// that returns more slots than the write costs the account.
func (l *Ledger) Release(ctx context.Context) error {
	l.mu.Lock()
	l.retireLocked(l.held...)
	l.held = nil
	slots := 0
	for _, u := range l.unused {
		slots += u.slots
	}
	broken := l.o.Now().Before(l.broken)
	l.mu.Unlock()
	l.io.Lock()
	defer l.io.Unlock()
	if broken || slots <= l.selfCost(l.o.Now()) {
		return nil
	}
	back := 0
	wrote, err := l.update(ctx, func(next *state, h head) bool {
		if h.sha == "" || h.closed {
			return false // a closed generation takes no more changes
		}
		back = l.giveBack(l.o.Now(), next)
		return true
	})
	if wrote {
		l.mu.Lock()
		l.gaveBackLocked(back)
		l.mu.Unlock()
	}
	return err
}

// Returned is how many slots this handle gave back (measurement).
func (l *Ledger) Returned() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.returned
}
