package writebudget

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Named generations: a one-request read for a process that holds nothing.
// Listing the generations and then reading the highest one's
// commit are two requests one after the other, because a process that
// has not written the ledger cannot know the highest one's name. So the
// name is made one it can know: a rotation opens the generation named
// for the closer's window (contract.PaceWindowGen, hours since the
// epoch), and a generation named for an earlier window is due, so the
// ledger is, but for the first grant of each hour, at the name of the
// current hour. A process reads GET /repos/{control}/commits/{that ref}:
// the ref and its commit's message in one answer.
//
// That answer is the ledger only if no higher generation exists. A higher
// one is opened only from a Closed state (rotate.go), and a Closed state
// read at the name is not used: the listing decides. What is left is a
// generation re-created after it was deleted (a process that read the
// state before it long ago, rotate.go): it can only be re-created once
// its ref is gone, and generations are kept, closed, until their window
// is retainWindows behind the clock (droppable), so the one a clock
// names now is never such a re-creation unless clocks are that far
// apart. The state says which generation it was written in (Gen): a
// commit read at another name is not taken for that generation.
//
// Clocks. Which generation is the ledger never depends on a clock: it is
// the highest present, as before. A clock only picks the name tried
// first (a miss costs the listing, as before, one request more) and when
// a generation is due (a clock ahead rotates a little early; one behind
// reads the closed generation, misses and lists until it catches up).
// Where the next generation is must not depend on whose clock opens it
// (two creations would both succeed): the closer writes it into the
// Closed state (Next), and whoever opens it creates that one. The first
// ledger of an account is still generation 1 (every first writer agrees
// on it), named at its first rotation.
//
// Mixed versions. A writer from before named generations opens gen+1
// after any Closed state, where this one opens Next: both creations can
// succeed. So a Closed state that names Next carries a fence for them:
// its pause, as they read it, is fenceFor ahead (its own pause is in
// PauseCarried, which this version reads). Such a writer waits, reads
// again, and by then the closer (or anyone's next grant) has opened Next,
// the highest generation, which it then uses as before. Older writers
// still delete every lower generation at each grant (not only those
// retainWindows behind): upgrade the dispatcher and the runner together.

// retainWindows is how many windows a closed generation is kept before
// it is deleted: see above.
const retainWindows = 2

// fenceFor is how long a writer from before named generations waits on a
// Closed state that names its successor.
const fenceFor = 10 * time.Minute

// readNamed reads the generation named for now's window in one request.
// ok is false when that is not surely the ledger: missing (GitHub answers
// 422 for a ref that does not exist), unreadable, closed, written as
// another generation, or Options.Sequential. The caller lists then; tried
// is the generation tried (0: none), for missedNamed; found says a ref
// was there.
func (l *Ledger) readNamed(ctx context.Context) (s state, h head, tried int, found, ok bool) {
	if l.o.Sequential || l.namesOff {
		return state{}, head{}, 0, false, false
	}
	gen := contract.PaceWindowGen(l.o.Now())
	// the full ref name: GET commits/{ref} resolves names as git does
	// (refs/pull/N/head is read this way), not only heads/ and tags/
	c, _, err := l.o.Client.Repositories.GetCommit(ctx, l.owner, l.name, contract.PaceGenRef(l.o.Account, gen), nil)
	if err != nil || c.GetSHA() == "" {
		return state{}, head{}, gen, false, false
	}
	s, parsed := l.cached(c)
	if !parsed || s.Gen != gen || s.Closed {
		return state{}, head{}, gen, true, false // the listing's read says what is wrong with it
	}
	l.namedMissed = 0
	return s, head{gen: gen, sha: c.GetSHA()}, gen, true, true
}

// cached returns the state c holds, parsing and remembering it when it is
// not cached yet; false when its message holds none.
func (l *Ledger) cached(c *github.RepositoryCommit) (state, bool) {
	if s, ok := l.cache[c.GetSHA()]; ok {
		return s, true
	}
	s, err := parse(c.GetCommit().GetMessage())
	if err != nil {
		return state{}, false
	}
	l.remember(c.GetSHA(), s)
	return s, true
}

// The first grant of an hour (a busy account's) finds no generation at
// the hour's name yet: the ledger is the one named for the hour before,
// which that grant closes (rotate.go). So after such a miss the listing
// goes out beside a read of that name, and when the listing says it is
// the ledger (the highest generation, at the commit read) its state is
// taken from that read (cached, so readAt makes no request): one round
// trip after the miss, not two. The listing decides, as without names;
// the read only saves the commit's.
func (l *Ledger) listBesideHourBefore(ctx context.Context, tried int) (head, error) {
	type got struct {
		c   *github.RepositoryCommit
		err error
	}
	before := make(chan got, 1)
	go func() {
		c, _, err := l.o.Client.Repositories.GetCommit(ctx, l.owner, l.name, contract.PaceGenRef(l.o.Account, tried-1), nil)
		before <- got{c, err}
	}()
	h, err := l.find(ctx)
	b := <-before
	if err == nil && h.sha != "" && h.gen == tried-1 && b.err == nil && b.c.GetSHA() == h.sha {
		l.cached(b.c) // readAt says what is wrong with it if it holds no state
	}
	return h, err
}

// missedNamed is told what the listing found after the read of generation
// tried missed: when that was the ledger, open and written as that
// generation, the one-request read should have found it. Twice in a row
// (once can be a generation opened between the two reads) means GitHub
// does not answer it here (an API that resolves no such name): the handle
// then lists only, as before named generations, rather than pay for a
// read that always misses.
func (l *Ledger) missedNamed(tried int, s state, h head) {
	if tried == 0 || h.gen != tried || s.Gen != tried || s.Closed {
		return
	}
	if l.namedMissed++; l.namedMissed < 2 {
		return
	}
	l.namesOff = true
	if l.o.Warn != nil {
		l.o.Warn(fmt.Errorf("writebudget: GET commits/%s does not find the ledger that is there: reading it from the listing from now on", contract.PaceGenRef(l.o.Account, tried)))
	}
}

// successor is the generation a rotation of gen at now opens.
func (l *Ledger) successor(gen int, now time.Time) int {
	if l.o.Sequential {
		return gen + 1
	}
	return max(gen+1, contract.PaceWindowGen(now))
}

// droppable keeps the generations of gens that may be deleted at now:
// all of them (Sequential), or those retainWindows behind now's window.
func (l *Ledger) droppable(gens []int, now time.Time) []int {
	if l.o.Sequential {
		return gens
	}
	keep := contract.PaceWindowGen(now) - retainWindows
	var out []int
	for _, g := range gens {
		if g < keep {
			out = append(out, g)
		}
	}
	return out
}

// wire is s as written: a Closed state that names its successor carries
// the fence for older writers (see above).
func (l *Ledger) wire(s state) state {
	if s.Closed && s.Next != 0 {
		s.PauseCarried = s.Pause
		s.Pause = max(s.Pause, l.o.Now().Add(fenceFor).UnixMilli())
	}
	return s
}
