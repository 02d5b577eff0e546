package writebudget

import "context"

// A grant usually costs three requests: list the ledger's refs (its
// head), commit, move the ref. The listing is only there to learn the
// head, and the non-forced ref update is the compare-and-swap whatever
// head the commit was made on: committed on a head that is no longer the
// ledger, the update is refused and nothing is recorded. So a handle
// with Options.Guess that wrote the head itself commits its next grant on
// that head without reading (a dispatcher on its own, a quiet hour): one
// request and one round trip less.
//
// A wrong guess costs what any lost compare-and-swap costs, a commit and
// a refused update (the account's writes when SelfCost > 0, paid by the
// next grant like every lost swap and covered meanwhile by Spare), and a
// read. So one wrong guess turns guessing off until distrust+1 reads in a
// row found the ledger as this handle left it: a dispatcher sharing the
// ledger with busy publish jobs reads first, as before, and pays at most
// one wrong guess per quiet stretch it sees. Publish jobs (short, many at
// once, writing with a token other jobs use up) never guess.

// distrust is how many reads finding the ledger untouched a wrong guess
// costs on top of the one that trusts again.
const distrust = 3

// readForGrant returns the ledger a grant is computed from: the head this
// handle wrote last when it may guess (first attempts only) and trusts
// it, else what a read finds. guessed says which. The caller holds l.io.
func (l *Ledger) readForGrant(ctx context.Context, mayGuess bool) (s state, h head, guessed bool, err error) {
	if mayGuess && l.o.Guess && l.trust > 0 && l.mine.sha != "" {
		if s, ok := l.cache[l.mine.sha]; ok {
			return s, l.mine, true, nil
		}
	}
	s, h, err = l.read(ctx)
	if err != nil {
		return state{}, head{}, false, err
	}
	switch {
	case l.mine.sha == "":
	case h.sha == l.mine.sha && h.gen == l.mine.gen:
		l.trust = min(l.trust+1, 1)
	default:
		l.trust = min(l.trust, 0) // someone else wrote: read first until it is quiet again
	}
	return s, h, false, nil
}

// Guesses is how many grants this handle committed on the head it wrote
// last, without reading the ledger first (measurement).
func (l *Ledger) Guesses() int {
	l.io.Lock()
	defer l.io.Unlock()
	return l.guesses
}
