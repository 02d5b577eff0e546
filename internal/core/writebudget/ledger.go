// Package writebudget keeps a bot account's content-creation budget in
// CONTROL, shared by every process that writes as the account: the
// dispatcher and each publish job, which run in different Actions jobs and
// machines. GitHub counts its secondary limits (80 writes a minute, 500 an
// hour) per account, so no process can pace the account alone.
//
// The ledger is one ref (contract.PaceRef) pointing at a commit whose
// message lists the grants of the last hour and a pause GitHub asked for.
// A process takes a grant of a few write slots at a time: it reads the
// ledger, finds the earliest moment the grant fits both windows and any
// pause, and commits the new ledger on top of the one it read, moving the
// ref from the commit it read: a compare-and-swap, so of two racing
// processes one wins and the other reads again. The commit and the ref
// move are one git push (Options.Push: the update names the ref's value
// now), or, with the REST API, a commit and a non-forced ref update. Slots of a grant are used within Hold of
// its time; the windows checked are widened by Hold, so however a process
// spreads its slots over that time no real minute or hour holds more than
// the limit. A process told to slow down (a 403/429 secondary limit with
// Retry-After) records the pause in the ledger; every other process sees
// it at its next grant, at most Hold later, and waits too.
//
// The ledger is rotated (rotate.go) so its commit chain stays short: after
// RotateEvery commits or RotateAfter, a grant closes the chain and the
// next generation of the ref starts at a root commit carrying the grants
// and pause still in force; the old chain becomes unreachable.
package writebudget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/google/uuid"

	"github.com/mention-runner/mention-runner/internal/core/clock"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
)

// Defaults for Options left zero.
const (
	DefaultBlock       = 8
	DefaultHold        = 15 * time.Second
	DefaultRotateEvery = 1000
	DefaultRotateAfter = 24 * time.Hour
	// DefaultSpare is what a dispatcher's lost compare-and-swap leaves
	// unrecorded when it pushes its updates (Options.Push): the refused
	// push (SelfCost 1). Its grant's commit exists only once the push is
	// applied, so no write goes on credit against it (credit.go).
	DefaultSpare = 1
	// DefaultRESTSpare is DefaultSpare for a ledger written with the REST
	// API (no Options.Push): the ledger commit and the refused ref update
	// (SelfCost 2), and the one write taken on credit.
	DefaultRESTSpare = 3
)

// UpdateCost is how many content writes one ledger update costs the
// account that writes it: 1 pushed with push (refpush: the commit and
// its ref in one request), 2 with the REST API (a commit, then the ref).
// Options.SelfCost and FallbackCost are this when that account is the
// budgeted one, 0 otherwise.
func UpdateCost(push *refpush.Client) int {
	if push != nil {
		return 1
	}
	return 2
}

// messagePrefix starts every ledger commit's message.
const messagePrefix = contract.PaceMessagePrefix

// Options configure a Ledger.
type Options struct {
	// Client writes the ledger in Repo. It must not pace through this
	// ledger (no Pacer sharing it): the ledger's own writes are counted
	// through SelfCost instead.
	Client  *github.Client
	Repo    string // CONTROL, owner/name
	Account string // the login whose writes are budgeted
	Holder  string // names this process in the ledger (a workflow run, a dispatcher id)

	PerMinute, PerHour int // 0 = GitHub's 80 and 500
	Block              int // slots per grant; 0 = DefaultBlock
	// MaxBlock lets a busy process take bigger grants: one that needs its
	// next grant while the last still runs gets twice the slots, up to
	// MaxBlock; one that let slots expire goes back to Block. Fewer
	// ledger updates for a process that writes steadily, little waste for
	// one that writes now and then. 0 = Block (fixed size).
	MaxBlock int
	Hold     time.Duration // a grant's slots are used within this; 0 = DefaultHold
	// SelfCost is how many content writes of the account one ledger update
	// costs: UpdateCost(Push) when Client writes as the account itself (1
	// pushed, 2 with the REST API), 0 when it is another account (the
	// workflow's token).
	SelfCost int
	// Push, when set, writes each ledger update as one git push of its
	// commit and ref, with Client's identity (refpush; reads stay on
	// Client); nil writes them with the REST API, two requests each.
	Push *refpush.Client
	// Fallback, when set, writes the ledger when Client cannot (its own
	// account refused by a secondary limit, say: a workflow token shared
	// with every assemble job), for retryBroken at a time; FallbackPush is
	// Push for it, and FallbackCost SelfCost (UpdateCost(FallbackPush)
	// when it is the account's own token). Without it the process would
	// pace itself alone, blind to the others.
	Fallback     *github.Client
	FallbackPush *refpush.Client
	FallbackCost int
	// RotateEvery and RotateAfter bound the ledger's commit chain: a
	// generation is closed and the next started after this many commits
	// or this long (0 = DefaultRotateEvery, DefaultRotateAfter).
	RotateEvery int
	RotateAfter time.Duration
	// Spare slots of each window are never granted: a process that pays
	// for its own ledger updates (SelfCost > 0) and loses a
	// compare-and-swap has made a refused push (or, with the REST API, a
	// commit and a refused ref update, and maybe a write on credit:
	// credit.go) that no ledger records; they land in the spare.
	// 0 = DefaultSpare, or DefaultRESTSpare without Push (the one such
	// process is the dispatcher; publish writes the ledger with the
	// workflow's token); negative = none.
	Spare int
	// Guess lets the handle commit a grant on the ledger's head as it
	// wrote it last, without reading it first, while that keeps working
	// (optimistic.go): for a process that is usually the only one writing
	// the ledger between its own grants (a running dispatcher). A wrong
	// guess costs a lost compare-and-swap's writes.
	Guess bool
	// Sequential numbers the generations 1, 2, 3… and reads the ledger
	// from the listing only, as before named generations (named.go): for
	// tests of that scheme. Every process sharing a ledger must agree.
	Sequential bool

	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Warn hears when the ledger cannot be used (unreadable, no permission):
	// the process then paces itself alone for a while (the pacer's own
	// limits and GitHub's Retry-After still hold) rather than stop writing.
	Warn func(error)
}

// Ledger is one process's handle on the account's budget. Safe for
// concurrent use.
type Ledger struct {
	o           Options
	owner, name string
	// mu guards the grants this process holds (held, last, block,
	// inflight, broken) and the counters; io serialises the ledger's reads
	// and writes (cache, wasted, fallback), which mu is not held across.
	mu           sync.Mutex
	io           ioLock
	held         []*held       // grants with slots left, oldest first (see ready.go)
	last         *held         // the latest grant, kept to size the next
	block        int           // slots of the next grant (Block … MaxBlock)
	inflight     chan struct{} // closed when the grant being taken is held (or failed)
	want         int           // slots Ready asked for, for the next grant
	wasted       int           // writes of lost compare-and-swaps, not yet in the ledger
	cache        map[string]state
	grants, cas  int // grants taken, compare-and-swaps lost (for measurement)
	pausesShared int
	broken       time.Time // ledger unusable: not tried again before then
	fallback     time.Time // written with Options.Fallback until then
	rotations    int       // generations this handle closed or opened
	dead         int       // generations it re-created after they were rotated past
	id           string    // names this handle's grants (grant.By)
	unused       []unused  // slots of finished grants to give back (release.go)
	returned     int       // slots given back (measurement)
	wrote        Grant     // the last ledger commit this handle wrote (under io)
	seen         state     // the ledger as last read or written (under mu; see Hour)
	seenOK       bool      // seen holds a state
	seenAt       time.Time // when seen was read or written
	granted      Grant     // the commit of its latest grant (under mu; see Granted)
	// A grant's commit, made but not yet on the ledger (its ref update in
	// flight), may take one write on credit (credit.go); under mu.
	announce    bool          // reserve's write announces its commit (under io)
	pending     Grant         // that commit
	pendingCh   chan struct{} // closed when the grant being taken has one
	credit      int           // writes taken on credit against pending
	credited    int           // of the grant just held, taken on credit
	grantsOwned bool          // OwnGrants was called
	// mine is the head this handle wrote last, and trust how many of its
	// grant reads since its last lost guess found the ledger still there:
	// while trusted, a grant is committed on mine without reading first
	// (optimistic.go). Guarded by l.io.
	mine    head
	trust   int
	guesses int // grants committed on mine without a read (measurement)
	// namedMissed counts reads at the name the clock gives that missed a
	// ledger that was there, in a row; namesOff stops them (named.go).
	// Guarded by l.io.
	namedMissed int
	namesOff    bool
}

// ioLock is a mutex on a channel: waiting for it is a channel send, which
// testing/synctest counts as durably blocked (a sync.Mutex wait is not),
// so tests in a bubble advance while a rotation finishes in the
// background holding it (ready.go).
type ioLock chan struct{}

func (c ioLock) Lock()   { c <- struct{}{} }
func (c ioLock) Unlock() { <-c }

// retryBroken is how long a process paces itself alone after the ledger
// failed it.
const retryBroken = time.Minute

// state is the ledger's content.
type state struct {
	Grants []grant `json:"grants"`           // the last hour's, oldest first
	Pause  int64   `json:"pause_until_ms"`   // no grant before this (unix ms)
	Holder string  `json:"holder,omitempty"` // who wrote this state
	// Seq counts the commits of this generation since its root, written
	// at Since (unix ms). A state without Since (the first generation,
	// written before rotation existed) is rotated at its next grant.
	Seq   int   `json:"seq,omitempty"`
	Since int64 `json:"since_ms,omitempty"`
	// Closed: no grant is added to this generation any more; the next
	// one carries its grants on (rotate.go).
	Closed bool `json:"closed,omitempty"`
	// Limits, when set, replace every process's own: the operator's way
	// to give the account other limits (GitHub Enterprise Server, a test
	// simulator) in one place, by committing them to the ledger.
	PerMinute int `json:"per_minute,omitempty"`
	PerHour   int `json:"per_hour,omitempty"`
	// Gen is the generation the state was written in, Next (Closed
	// states) the one that carries it on, PauseCarried a Closed state's
	// own pause (named.go). States written before named generations have
	// none of them: Next is then gen+1.
	Gen          int   `json:"gen,omitempty"`
	Next         int   `json:"next,omitempty"`
	PauseCarried int64 `json:"pause_carried_ms,omitempty"`
}

// grant is n slots usable from At (unix ms) for Hold.
type grant struct {
	At int64 `json:"at_ms"`
	N  int   `json:"n"`
	// By names the handle that took it (Ledger.id), so that handle can
	// give back the slots it did not use (release.go).
	By string `json:"by,omitempty"`
}

// New returns a ledger handle.
func New(o Options) (*Ledger, error) {
	owner, name, ok := strings.Cut(o.Repo, "/")
	if !ok || owner == "" || name == "" || o.Client == nil || o.Account == "" {
		return nil, fmt.Errorf("writebudget: need a client, the control repo as owner/name (got %q) and the account", o.Repo)
	}
	if o.PerMinute == 0 {
		o.PerMinute = contract.ContentWritesPerMinute
	}
	if o.PerHour == 0 {
		o.PerHour = contract.ContentWritesPerHour
	}
	if o.Block <= 0 {
		o.Block = DefaultBlock
	}
	if o.Hold <= 0 {
		o.Hold = DefaultHold
	}
	o.MaxBlock = max(o.MaxBlock, o.Block)
	if need := o.MaxBlock + o.SelfCost; need > o.PerMinute || need > o.PerHour {
		return nil, fmt.Errorf("writebudget: a grant of %d slots (+%d for the ledger) exceeds the limits %d/min, %d/h", o.MaxBlock, o.SelfCost, o.PerMinute, o.PerHour)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	if o.Spare == 0 {
		o.Spare = DefaultSpare
		if o.Push == nil {
			o.Spare = DefaultRESTSpare
		}
	}
	o.Spare = max(o.Spare, 0)
	if o.RotateEvery <= 0 {
		o.RotateEvery = DefaultRotateEvery
	}
	if o.RotateAfter <= 0 {
		o.RotateAfter = DefaultRotateAfter
	}
	l := &Ledger{o: o, owner: owner, name: name, cache: map[string]state{}, block: o.Block, id: uuid.NewString()[:8], io: make(ioLock, 1)}
	if o.Guess {
		l.trust = 1 // its first write is made on a read; guessing starts after it
	}
	return l, nil
}

// Stats says how a ledger handle was used: grants taken, compare-and-swaps
// lost to other processes, and slow-downs it recorded for everyone.
func (l *Ledger) Stats() (grants, lost, pauses int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grants, l.cas, l.pausesShared
}

// Take blocks until one content write of the account fits its limits:
// it uses a slot of a grant this process holds, or waits for the grant
// being taken (by Ready or another Take), or takes one.
func (l *Ledger) Take(ctx context.Context) error {
	return l.take(ctx)
}

// SlowDown records that GitHub asked the account to wait until until: no
// grant (this process's or another's) starts before it, and this process's
// unused slots are dropped.
func (l *Ledger) SlowDown(ctx context.Context, until time.Time) error {
	l.mu.Lock()
	l.retireLocked(l.held...)
	l.held = nil
	l.mu.Unlock()
	l.io.Lock()
	defer l.io.Unlock()
	wrote, err := l.update(ctx, func(next *state, _ head) bool {
		if next.Pause >= until.UnixMilli() {
			return false // someone said so already
		}
		next.Pause = until.UnixMilli()
		return true
	})
	if wrote {
		l.mu.Lock()
		l.pausesShared++
		l.mu.Unlock()
	}
	return err
}

// update writes the ledger as change makes it from the state read (its
// last hour), again while other processes move it first; change returns
// false when there is nothing to write. It reports whether it wrote. The
// caller holds l.io.
func (l *Ledger) update(ctx context.Context, change func(next *state, h head) bool) (bool, error) {
	for attempt := 0; ; attempt++ {
		cur, h, err := l.read(ctx)
		if err != nil {
			return false, err
		}
		next := cur.pruned(l.o.Now(), l.window(time.Hour))
		if !change(&next, h) {
			return false, nil
		}
		err = l.write(ctx, h, next)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, refstate.ErrLost) || attempt >= 20 {
			return false, err
		}
	}
}

// reserve adds a grant of size() slots (plus the ledger's own cost) at
// the earliest moment it fits, and returns that moment; size is asked
// once the ledger is read, so a caller that wants more meanwhile gets it
// (Ready). after, when not nil, finishes a rotation the grant made (opens
// the next generation) or deletes generations left behind: the caller runs it
// once the grant is held, so a mention's writes do not wait for it
// (rotate.go). The caller holds l.io, also while after runs.
func (l *Ledger) reserve(ctx context.Context, size func() int) (at time.Time, after func(context.Context), err error) {
	for lost := 0; ; {
		cur, h, guessed, err := l.readForGrant(ctx, lost == 0)
		if err != nil {
			return time.Time{}, nil, err
		}
		now := l.o.Now()
		if pause := time.UnixMilli(cur.Pause); pause.After(now) {
			// GitHub told the account to wait: not even the ledger is
			// written before then (its writes may be the account's too)
			if err := l.sleepUnlocked(ctx, pause.Sub(now)); err != nil {
				return time.Time{}, nil, fmt.Errorf("writebudget: waiting out the account's slow-down: %w", err)
			}
			continue
		}
		// the grant pays for the ledger's own writes: this update, lost
		// ones, a rotation and deleting generations it left behind
		selfCost := l.selfCost(now)
		rotate := h.sha != "" && !h.closed && l.due(cur, h.gen, now)
		if (rotate || h.closed) && !h.listed && !l.o.Sequential {
			// the head was read at its name or guessed: a rotation (once
			// an hour) lists the generations to delete those left behind
			if f, err := l.find(ctx); err == nil && f.gen == h.gen {
				h.stale = f.stale
			}
		}
		dropped := h.stale
		if rotate || h.closed {
			dropped = append(dropped[:len(dropped):len(dropped)], h.gen)
		}
		dropped = l.droppable(dropped, now)
		need := size() + selfCost + l.wasted + len(dropped)*min(selfCost, 1)
		if rotate {
			need += selfCost // the next generation's root and ref
		}
		next := cur.pruned(now, l.window(time.Hour))
		back := l.giveBack(now, &next)
		perMinute, perHour := l.o.PerMinute, l.o.PerHour
		if next.PerMinute > 0 && next.PerHour > 0 && need <= next.PerMinute && need <= next.PerHour {
			perMinute, perHour = next.PerMinute, next.PerHour
		}
		// Spare is left free for a lost update's writes, which no ledger
		// records (see Options.Spare)
		at := next.fit(now, need, []window{{l.window(time.Minute), max(perMinute-l.o.Spare, need)}, {l.window(time.Hour), max(perHour-l.o.Spare, need)}})
		if at.After(now) {
			// no room yet: wait for it, then read again. The ledger is
			// written only when the grant starts now, so its own writes
			// (SelfCost) land in the window they are counted in.
			if err := l.sleepUnlocked(ctx, at.Sub(now)); err != nil {
				return time.Time{}, nil, fmt.Errorf("writebudget: waiting for room in the account's limits: %w", err)
			}
			continue
		}
		next.Grants = append(next.Grants, grant{At: at.UnixMilli(), N: need, By: l.id})
		next.Holder = l.o.Holder
		next.Closed = rotate
		if rotate {
			next.Next = l.successor(h.gen, now)
		}
		l.announce = true
		err = l.write(ctx, h, next)
		l.announce = false
		credit := l.settleCredit(err)
		if err == nil {
			l.wasted = 0
			l.mu.Lock()
			l.credited = credit
			l.granted = l.wrote
			l.gaveBackLocked(back)
			l.grants++
			if guessed {
				l.guesses++
			}
			if rotate || h.closed {
				l.rotations++
			}
			l.mu.Unlock()
			if !rotate && len(dropped) == 0 {
				return at, nil, nil // nothing to finish: most grants
			}
			if !rotate {
				return at, func(ctx context.Context) { l.drop(ctx, dropped) }, nil
			}
			return at, func(ctx context.Context) {
				if !l.open(ctx, h, next) {
					dropped = l.droppable(h.stale, now) // the closed generation stays until someone opens the next
				}
				l.drop(ctx, dropped)
			}, nil
		}
		if !errors.Is(err, refstate.ErrLost) {
			if l.o.Fallback != nil && !now.Before(l.fallback) {
				// this client cannot write the ledger just now: the
				// fallback can, at its own cost, counted from the next round
				l.fallback = now.Add(retryBroken)
				if l.o.Warn != nil {
					l.o.Warn(fmt.Errorf("%w; the ledger is written with the fallback token for %s", err, retryBroken))
				}
				continue
			}
			return time.Time{}, nil, err
		}
		if lost++; lost > 50 {
			return time.Time{}, nil, err
		}
		// the lost swap's refused push (or commit and refused ref
		// update) were writes of the account too
		l.mu.Lock()
		l.cas++
		l.mu.Unlock()
		l.wasted += selfCost
		if guessed {
			l.trust = -distrust
		}
	}
}

// sleepUnlocked is reserve's wait with l.io let go, so a SlowDown reaches
// the ledger at once, not a minute into the pause (TestProveAccountPacing).
// The caller holds l.io, and holds it again on return.
func (l *Ledger) sleepUnlocked(ctx context.Context, d time.Duration) error {
	l.io.Unlock()
	defer l.io.Lock()
	return l.o.Sleep(ctx, d)
}

// window is a limit's window widened by Hold (see the package comment),
// and by writeLatency: a slot taken just before its grant expires is
// written a round trip later.
func (l *Ledger) window(d time.Duration) time.Duration { return d + l.o.Hold + writeLatency }

// writeLatency bounds the time from Take to GitHub counting the write.
const writeLatency = 5 * time.Second

type window struct {
	d     time.Duration
	limit int
}

// pruned drops grants no window can see any more.
func (s state) pruned(now time.Time, keep time.Duration) state {
	out := state{Pause: s.Pause, PerMinute: s.PerMinute, PerHour: s.PerHour, Seq: s.Seq, Since: s.Since}
	for _, g := range s.Grants {
		if g.At > now.Add(-keep).UnixMilli() {
			out.Grants = append(out.Grants, g)
		}
	}
	return out
}

// fit is the earliest moment, not before now, the pause or the last grant
// (grants are kept in time order), when need more slots keep every window
// within its limit.
func (s state) fit(now time.Time, need int, ws []window) time.Time {
	at := max(now.UnixMilli(), s.Pause)
	if n := len(s.Grants); n > 0 {
		at = max(at, s.Grants[n-1].At)
	}
	for moved := true; moved; {
		moved = false
		for _, w := range ws {
			// grants inside (at-w, at]; while too many, move past the oldest
			for {
				sum, oldest := 0, int64(-1)
				for _, g := range s.Grants {
					if g.At > at-w.d.Milliseconds() && g.At <= at {
						sum += g.N
						if oldest < 0 {
							oldest = g.At
						}
					}
				}
				if sum+need <= w.limit || oldest < 0 {
					break
				}
				at = oldest + w.d.Milliseconds()
				moved = true
			}
		}
	}
	return time.UnixMilli(at).UTC()
}

// SetLimits commits the account's limits into the ledger: every process
// uses them from its next grant on, instead of its own (GitHub's 80 and
// 500). For GitHub Enterprise Server's own limits, or a simulator.
func (l *Ledger) SetLimits(ctx context.Context, perMinute, perHour int) error {
	if perMinute < l.o.MaxBlock+l.o.SelfCost || perHour < l.o.MaxBlock+l.o.SelfCost {
		return fmt.Errorf("writebudget: limits %d/min, %d/h leave no room for a grant of %d", perMinute, perHour, l.o.MaxBlock+l.o.SelfCost)
	}
	l.io.Lock()
	defer l.io.Unlock()
	_, err := l.update(ctx, func(next *state, _ head) bool {
		next.Holder = l.o.Holder
		next.PerMinute, next.PerHour = perMinute, perHour
		return true
	})
	return err
}
