package writebudget

import "context"

// One write on credit. A grant written with the REST API is two
// sequential requests: its commit, then the ref update that puts it on
// the ledger (the compare-and-swap). While the update is in flight, one
// write marked OnCredit (the dispatcher's claim, whose ref points at that
// very commit: see Grant) goes out beside it instead of a round trip
// later. When the update wins, the write is one of the grant's slots.
// When it loses, the write joins the lost update's own (the commit and
// the refused update) as writes no ledger records yet: the next grant
// records them (wasted), and until then they fall in the slots every
// process leaves free (Options.Spare, DefaultRESTSpare = SelfCost + 1 for
// this reason). At most one write per update goes on credit, so a lost
// update leaves no more unrecorded than Spare.
//
// A pushed grant (Options.Push) is one request, and its commit exists
// only once that request is applied: it is announced after, so a write
// marked OnCredit is then simply one of its slots and none is ever lost.

type creditKey struct{}

// OnCredit marks ctx's write as one that may go out on credit while this
// process's grant is being recorded.
func OnCredit(ctx context.Context) context.Context {
	return context.WithValue(ctx, creditKey{}, true)
}

func onCredit(ctx context.Context) bool {
	v, _ := ctx.Value(creditKey{}).(bool)
	return v
}

// onCreditLocked takes ctx's write on credit when it may: marked OnCredit,
// a grant's commit made and its update in flight, no other write on
// credit against it. Called with l.mu held.
func (l *Ledger) onCreditLocked(ctx context.Context) bool {
	if !onCredit(ctx) || l.inflight == nil || l.pending.Commit == "" || l.credit > 0 {
		return false
	}
	l.credit++
	return true
}

// announceLocked publishes the commit of the grant being written, before
// its update (after it, when pushed): Granted returns it, and one write
// may go on credit.
// Called under l.io (from write), takes l.mu.
func (l *Ledger) announceLocked(g Grant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = g
	if l.pendingCh != nil {
		close(l.pendingCh)
		l.pendingCh = nil
	}
}

// settleCredit ends the announcement of an update that returned err and
// returns the writes taken on credit against it; when the update did not
// land they are wasted (recorded by the next grant). Called under l.io.
func (l *Ledger) settleCredit(err error) int {
	l.mu.Lock()
	c := l.credit
	l.credit, l.pending = 0, Grant{}
	l.mu.Unlock()
	if err != nil {
		l.wasted += c
	}
	return c
}
