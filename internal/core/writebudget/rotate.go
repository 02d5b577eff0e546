package writebudget

import (
	"context"
	"errors"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
)

// Rotation keeps the ledger's commit chain short. Every update is a
// commit on top of the last, so a ledger that is never cut grows by a
// commit a grant (1–2 thousand a day at full load). GitHub's REST ref
// update has no "expected value": a non-forced update is the
// compare-and-swap, and a root commit is never a fast forward, so the
// chain cannot be cut in place. (A push names the value, but a process
// writing with the REST API must still find every update a fast forward.) Instead the ledger has generations (contract.PaceGenRef) and
// the highest present is the ledger:
//
//  1. A grant taken when the generation is due (RotateEvery commits or
//     RotateAfter since its root, or the first generation, which predates
//     rotation) is written like any other, by compare-and-swap, with the
//     state marked Closed: no later grant lands on this chain, because
//     every process reading a Closed state opens the next generation
//     instead of committing on top.
//  2. The next generation's ref is created pointing at a root commit that
//     carries the closed state's grants and pause. Creating a ref fails
//     when it exists, so exactly one root wins; the process that closed
//     does this at once, any other that reads the Closed state first does
//     it with its own grant (so a closer killed in between leaves no gap).
//  3. The closed generation's ref is deleted (also any older one still
//     present): its chain is unreachable and GitHub collects it. A process
//     still holding an older generation's commit fails its update (not a
//     fast forward, or no such ref) and reads again. One that read a
//     generation Closed long ago may create the next after it too was
//     rotated past and deleted: write sees a higher generation exists and
//     takes its grant again; the dead ref is deleted as a left-behind one.
//
// The ledger's writes of a rotation (closing, the root, the deletions) are
// paid by the grant that makes them, like the update's own cost.

// due says whether the generation read should be closed by the next grant:
// when full or old, or named for an earlier window than now's (named.go),
// which keeps the ledger at the name a fresh process reads. A quiet
// account's is not: its rotation (root, ref, listing, deletions) would
// cost more than the two requests it saves later fresh reads, and not
// rotating is always safe.
func (l *Ledger) due(s state, gen int, now time.Time) bool {
	if s.Since == 0 || s.Seq+1 >= l.o.RotateEvery || now.Sub(time.UnixMilli(s.Since)) >= l.o.RotateAfter {
		return true
	}
	w := contract.PaceWindowGen(now)
	return !l.o.Sequential && gen < w && (gen < w-quietNamed || !s.quiet(now))
}

// busyGrants is how many grants in an hour and the one before make an account busy
// enough that rotating to the hour's name pays (see due).
const busyGrants = 3

// quietNamed: a generation named this many windows behind or more (the
// first, generation 1, included) is renamed whether quiet or not.
const quietNamed = 24

// quiet says whether fewer than busyGrants grants were taken in now's
// window and the one before (as far as the state still holds them).
func (s state) quiet(now time.Time) bool {
	since := int64(contract.PaceWindowGen(now)-1) * contract.PaceWindow.Milliseconds()
	n := 0
	for _, g := range s.Grants {
		if g.At >= since {
			n++
		}
	}
	return n < busyGrants
}

// open starts the generation after the closed one h with closed's grants.
// It reports whether that generation (or a later one) exists now, opened
// by this process or another; false when the write failed otherwise,
// its creation not stored included (the next reader opens it; deleting
// the closed generation then would leave no ledger, or an older one).
func (l *Ledger) open(ctx context.Context, h head, closed state) bool {
	next := closed
	next.Closed = false
	h.closed, h.next = true, closed.Next
	err := l.write(ctx, h, next)
	return err == nil || errors.Is(err, refstate.ErrLost) && !errors.Is(err, errNotStored)
}

// drop deletes the generations a rotation left behind. Best effort: one
// already deleted is fine, and one left is deleted by a later grant.
func (l *Ledger) drop(ctx context.Context, gens []int) {
	for _, gen := range gens {
		_, _ = l.client().Git.DeleteRef(ctx, l.owner, l.name, contract.PaceGenRef(l.o.Account, gen)[len("refs/"):])
	}
}

// Rotations says how many generations this handle closed or opened, and
// how many it re-created after they were rotated past and deleted with a
// grant nobody carried on (dead ones below the ledger, that grant taken
// again; measurement). A re-creation whose grant was carried on (the
// closer's, after another process opened the generation from the closed
// state) is not counted: nothing needed taking again.
func (l *Ledger) Rotations() (rotations, dead int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rotations, l.dead
}
