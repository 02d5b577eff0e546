package refstate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
)

// Creates made at the same time share a push (group commit, no timer):
// the first Create marked Together while no such push is in flight sends
// at once; those arriving meanwhile wait and go together in the next
// push, each update a compare-and-swap create of its own (pushes are not
// atomic: each update is applied or refused alone). A push is one write
// of the account however many refs it creates, so a poll cycle's
// parallel claims cost a few writes instead of one each. Each caller then
// reads its own answer as a lone Create does (pushCreate).

type togetherKey struct{}

// Together marks ctx's Creates as ones that may share a push with other
// Creates of the store in flight at the same time. A shared push carries
// the first caller's context values (a write on credit, a retry policy),
// so the callers' contexts must be alike; it is cancelled only when every
// caller's context is.
func Together(ctx context.Context) context.Context {
	return context.WithValue(ctx, togetherKey{}, true)
}

func together(ctx context.Context) bool {
	v, _ := ctx.Value(togetherKey{}).(bool)
	return v
}

// createReq is one Create waiting for a shared push.
type createReq struct {
	ctx context.Context
	ref string
	m   Mark
	res chan error        // the push's answer for this create
	led chan []*createReq // the next batch, for this caller to send
}

// createQueue holds the Creates waiting for the push in flight.
type createQueue struct {
	mu      sync.Mutex
	busy    bool // a push is in flight
	waiting []*createReq
}

// pushTogether sends the create of ref at m in a push shared with the
// Creates made meanwhile and returns the push's error for it (the push's
// own, or the update's).
func (s *Store) pushTogether(ctx context.Context, ref string, m Mark) error {
	r := &createReq{ctx: ctx, ref: ref, m: m, res: make(chan error, 1), led: make(chan []*createReq, 1)}
	q := &s.creates
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		s.sendCreates([]*createReq{r})
		return <-r.res
	}
	q.waiting = append(q.waiting, r)
	q.mu.Unlock()
	done := ctx.Done()
	for {
		select {
		case err := <-r.res:
			return err
		case batch := <-r.led:
			s.sendCreates(batch)
			return <-r.res
		case <-done:
			if s.leaveCreates(r) {
				return fmt.Errorf("refstate: waiting to create %s: %w", ref, ctx.Err())
			}
			// Taken into a batch already: the others may wait on this
			// caller to send it, and its answer comes with theirs.
			done = nil
		}
	}
}

// leaveCreates takes r out of the waiting Creates; false when it was
// taken into a batch already.
func (s *Store) leaveCreates(r *createReq) bool {
	q := &s.creates
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.waiting, r)
	if i < 0 {
		return false
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	return true
}

// sendCreates pushes batch, hands the Creates that arrived meanwhile to
// the first of them to send next, and answers each of batch.
func (s *Store) sendCreates(batch []*createReq) {
	ctx, done := batchContext(batch)
	var commits []refpush.Commit
	sent := map[string]bool{}
	ups := make([]refpush.Update, len(batch))
	for i, r := range batch {
		ups[i] = refpush.Update{Ref: r.ref, New: r.m.Commit}
		if !sent[r.m.Commit] {
			sent[r.m.Commit] = true
			commits = append(commits, pushed(r.m)...)
		}
	}
	res, err := s.Push.Push(ctx, s.Owner+"/"+s.Name, commits, ups)
	done()
	s.nextCreates()
	for i, r := range batch {
		if err != nil {
			r.res <- err
			continue
		}
		r.res <- res[i]
	}
}

// nextCreates gives the waiting Creates (one per ref, up to a push's
// updates) to the first of them to send, or ends the busy spell.
func (s *Store) nextCreates() {
	q := &s.creates
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch, rest []*createReq
	refs := map[string]bool{}
	for _, r := range q.waiting {
		// a push names a ref once: a second Create of it goes next time
		if refs[r.ref] || len(batch) == refpush.DefaultMaxUpdates {
			rest = append(rest, r)
			continue
		}
		refs[r.ref] = true
		batch = append(batch, r)
	}
	q.waiting = rest
	if len(batch) == 0 {
		q.busy = false
		return
	}
	batch[0].led <- batch
}

// batchContext is the context of batch's push: the first caller's values,
// cancelled once every caller's context is done. done releases it.
func batchContext(batch []*createReq) (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, r := range batch {
		stops[i] = context.AfterFunc(r.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
