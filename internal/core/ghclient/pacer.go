package ghclient

import (
	"context"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/clock"
	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// GitHub's documented secondary limits for content-creating requests, and
// its advice to leave a second between writes.
const (
	DefaultWritesPerMinute = contract.ContentWritesPerMinute
	DefaultWritesPerHour   = contract.ContentWritesPerHour
	DefaultWriteGap        = time.Second
)

// Pacer spaces content-creating requests so the bot stays under GitHub's
// secondary limits. It keeps the times of the last sends and grants a new
// one only when no 60 s window would hold more than perMinute and no hour
// more than perHour, at least minGap after the previous one. (A token
// bucket of 80 refilled at 80/min admits 160 in a minute; GitHub counts
// per window.) Safe for concurrent use; each caller gets its own slot.
type Pacer struct {
	mu        sync.Mutex
	perMinute int
	perHour   int
	minGap    time.Duration
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) error
	slots     []time.Time // ring of the latest granted send times, ascending
	next      int         // where the next slot goes
	n         int         // slots filled
	paused    time.Time   // GitHub said slow down until then
	budget    AccountBudget
}

// AccountBudget is the account's write budget shared with the account's
// other processes (the dispatcher, publish jobs in other Actions jobs):
// Take blocks until one more content-creating request fits the account's
// limits; SlowDown tells every process that GitHub asked the account to
// wait until then.
type AccountBudget interface {
	Take(ctx context.Context) error
	SlowDown(ctx context.Context, until time.Time) error
}

// Share makes every write this pacer grants also take a slot from b, the
// budget all of the account's processes share. It returns p.
func (p *Pacer) Share(b AccountBudget) *Pacer {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.budget = b
	return p
}

// SlowDown holds every later write of this pacer until until (GitHub's
// Retry-After of a secondary limit) and passes it on to the shared budget,
// so the account's other processes back off too. A budget that cannot
// record it does not stop this process from backing off.
func (p *Pacer) SlowDown(ctx context.Context, until time.Time) error {
	p.mu.Lock()
	p.paused = later(p.paused, until)
	b := p.budget
	p.mu.Unlock()
	if b == nil {
		return nil
	}
	return b.SlowDown(ctx, until)
}

// NewPacer builds a Pacer. Zero values take the defaults (80/min, 500/h,
// 1 s); a negative value turns that limit off. nil now/sleep use the real
// clock.
func NewPacer(perMinute, perHour int, minGap time.Duration, now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) *Pacer {
	if perMinute == 0 {
		perMinute = DefaultWritesPerMinute
	}
	if perHour == 0 {
		perHour = DefaultWritesPerHour
	}
	if minGap == 0 {
		minGap = DefaultWriteGap
	}
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = clock.Sleep
	}
	return &Pacer{
		perMinute: perMinute, perHour: perHour, minGap: max(minGap, 0),
		now: now, sleep: sleep,
		slots: make([]time.Time, max(perMinute, perHour, 1)),
	}
}

// Wait blocks until the caller may send one content-creating request, or
// ctx ends. A slot reserved by a cancelled Wait stays used: pacing errs on
// the slow side.
func (p *Pacer) Wait(ctx context.Context) error {
	at, now := p.reserve()
	if d := at.Sub(now); d > 0 {
		if err := p.sleep(ctx, d); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	b := p.budget
	p.mu.Unlock()
	if b != nil {
		return b.Take(ctx)
	}
	return nil
}

func (p *Pacer) reserve() (at, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now = p.now()
	at = later(now, p.paused)
	if p.n > 0 {
		at = later(at, p.recent(1).Add(p.minGap))
	}
	if p.perMinute > 0 && p.n >= p.perMinute {
		at = later(at, p.recent(p.perMinute).Add(time.Minute))
	}
	if p.perHour > 0 && p.n >= p.perHour {
		at = later(at, p.recent(p.perHour).Add(time.Hour))
	}
	p.slots[p.next] = at
	p.next = (p.next + 1) % len(p.slots)
	p.n = min(p.n+1, len(p.slots))
	return at, now
}

// Hour reports how many writes the pacer let through in the hour up to
// now (those it reserved for a moment ahead included) and its hourly limit
// (0: none). It counts this pacer's writes only: one process's.
func (p *Pacer) Hour() (used, limit int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := p.now().Add(-time.Hour)
	for k := 1; k <= p.n && p.recent(k).After(from); k++ {
		used++
	}
	return used, max(p.perHour, 0)
}

// recent returns the k-th most recent slot, k from 1.
func (p *Pacer) recent(k int) time.Time {
	return p.slots[(p.next-k+len(p.slots))%len(p.slots)]
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
