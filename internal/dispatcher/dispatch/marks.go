package dispatch

import (
	"context"
	"errors"
	"sync"

	"github.com/mention-runner/mention-runner/internal/core/refstate"
)

// A poll cycle marks its mentions dispatched together, after its threads
// are handled: one push for the cycle (refstate.SetSharedMany) instead of
// a write per mention. Until then the claims read "claimed" to other
// dispatchers (they leave them for their next cycle, as they do a claim
// being sent), and this process knows them as sent. A thread whose mark
// was not written stays unread, so a later cycle marks it.
type markBatch struct {
	mu   sync.Mutex
	from map[string]string // jobid → the claim commit the ref is at
}

type markBatchKey struct{}

// withMarks makes settle queue dispatched marks in b.
func withMarks(ctx context.Context, b *markBatch) context.Context {
	return context.WithValue(ctx, markBatchKey{}, b)
}

func marksOf(ctx context.Context) *markBatch {
	b, _ := ctx.Value(markBatchKey{}).(*markBatch)
	return b
}

func (b *markBatch) add(jobID, claimCommit string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.from[jobID] = claimCommit
}

// BatchMarks returns a context under which Handle queues its dispatched
// marks instead of writing each, and the function that writes them all
// (one push): a poll cycle's. Under it, claims made at the same time share
// a push (refstate.Together). The function returns the mentions whose mark
// was not written, by jobid; their threads must stay unread. Without a
// pusher the context is ctx and each mark is written as it comes.
func (d *Dispatcher) BatchMarks(ctx context.Context) (context.Context, func(context.Context) map[string]error) {
	b := d.newMarks()
	if b == nil {
		return ctx, func(context.Context) map[string]error { return nil }
	}
	// The cycle's threads are handled side by side: their claims share
	// pushes too (refstate.Together).
	return refstate.Together(withMarks(ctx, b)), func(ctx context.Context) map[string]error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
		defer cancel()
		return d.flushMarks(ctx, b)
	}
}

// newMarks returns a batch for one cycle, or nil when marks cannot be
// written together (no pusher): each is then written as it comes.
func (d *Dispatcher) newMarks() *markBatch {
	if d.cfg.DryRun || d.states().Push == nil {
		return nil
	}
	return &markBatch{from: map[string]string{}}
}

// flushMarks writes b's marks and returns the mentions whose mark was not
// written (their threads stay unread). A claim taken over meanwhile is its
// new holder's to mark: not a failure.
func (d *Dispatcher) flushMarks(ctx context.Context, b *markBatch) map[string]error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	jobs := make(map[string]string, len(b.from))
	for job, commit := range b.from {
		jobs[job] = commit
	}
	b.mu.Unlock()
	if len(jobs) == 0 {
		return nil
	}
	from := make(map[string]string, len(jobs))
	for job, commit := range jobs {
		from[DedupeRef(job)] = commit
	}
	failedRefs, err := d.states().SetSharedMany(ctx, StatusDispatched, from)
	failed := map[string]error{}
	for job := range jobs {
		ferr := err
		if ferr == nil {
			ferr = failedRefs[DedupeRef(job)]
		}
		if errors.Is(ferr, refstate.ErrLost) {
			d.cfg.Logger.Warn("claim was taken over before it was marked", "jobid", job, "status", StatusDispatched)
			ferr = nil
		}
		if ferr != nil {
			failed[job] = ferr
			continue
		}
		d.forget(job)
	}
	return failed
}
