package refpush

import (
	"context"
	"errors"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
)

// DefaultMaxUpdates bounds the updates DeleteAll sends in one push. 100 is
// the page a ref listing reads, so a caller deleting what it listed
// writes once per page read; it keeps one push small (about 13 KB of
// commands) and quick for the server, which checks every ref it updates,
// well inside the push's timeout; and a push whose answer is lost leaves
// at most that many refs whose fate the caller does not know.
const DefaultMaxUpdates = 100

// DeleteAll deletes each ref of dels if it is still at its Old (which must
// be an object the repository has, as a listing gives), MaxUpdates refs a
// push, one push after another. It returns one error per update, in their
// order: nil (deleted), a *RejectedError (the ref moved or is gone: left
// as it is), or the error of its push as a whole. After a push fails as a
// whole the rest are not sent and carry that error too: a delete is safe
// to repeat, so a caller tries again later, and a push that may have
// landed (MaybeApplied) needs no reading back.
func (c *Client) DeleteAll(ctx context.Context, repo string, dels []Update) []error {
	errs, _ := c.deleteAll(ctx, repo, dels, nil)
	return errs
}

// Rider is a change sent in the first push of DeleteListedWith beside its
// deletes, with the commits it needs: a ref that says the deletes were
// made (a sweep's marker) costs no request of its own.
type Rider struct {
	Commits []Commit
	Update  Update
}

// ErrNotSent is a Rider's outcome when there was nothing to delete.
var ErrNotSent = errors.New("refpush: not sent: nothing to delete")

// deleteAll is DeleteAll whose first push also carries rider (nil: none);
// riderErr is the rider's outcome: nil when applied, its *RejectedError,
// or the first push's error.
func (c *Client) deleteAll(ctx context.Context, repo string, dels []Update, rider *Rider) (errs []error, riderErr error) {
	errs = make([]error, len(dels))
	fail := func(from int, err error) []error {
		for k := from; k < len(errs); k++ {
			errs[k] = err
		}
		return errs
	}
	for _, d := range dels {
		if d.Old == "" || d.New != "" {
			err := fmt.Errorf("refpush: delete %s: want the ref's current object as Old and no New (got %q, %q): %w", d.Ref, d.Old, d.New, ErrInvalid)
			return fail(0, err), err
		}
	}
	per := c.MaxUpdates
	if per <= 0 {
		per = DefaultMaxUpdates
	}
	var commits []Commit
	var first []Update
	if rider != nil {
		commits, first = rider.Commits, []Update{rider.Update}
		riderErr = ErrNotSent
	}
	for start := 0; start < len(dels); {
		end := min(start+per-len(first), len(dels))
		if end <= start { // a MaxUpdates of 1 sends the rider with one delete
			end = start + 1
		}
		res, err := c.Push(ctx, repo, commits, append(first, dels[start:end]...))
		if err != nil {
			if first != nil {
				riderErr = err
			}
			return fail(start, err), riderErr
		}
		if first != nil {
			riderErr, res = res[0], res[1:]
		}
		copy(errs[start:end], res)
		commits, first = nil, nil
		start = end
	}
	return errs, riderErr
}

// DeleteListed deletes refs as a listing gave them (each Old the commit
// listed; an Update with no Ref is a ref kept, skipped) with DeleteAll, as
// a sweep does: each push is sent once, not repeated by a retrying client
// after a lost answer (it would find its deletes done and report them
// refused, at a write's cost; what a lost push left, the next sweep
// finds). deleted[i] says dels[i] was deleted; problems has an error for
// each ref left because it changed since it was listed (wrapping a
// *RejectedError), and one for all the refs of a push that failed as a
// whole and of the later ones, not sent.
func (c *Client) DeleteListed(ctx context.Context, repo string, dels []Update) (deleted []bool, problems []error) {
	deleted, _, problems = c.DeleteListedWith(ctx, repo, dels, nil)
	return deleted, problems
}

// DeleteListedWith is DeleteListed whose first push also carries rider
// (nil: none; with nothing to delete, nothing is sent). riderErr is the
// rider's outcome: nil when applied, its *RejectedError, or the error of
// the push (which, like the deletes, is not read back).
func (c *Client) DeleteListedWith(ctx context.Context, repo string, dels []Update, rider *Rider) (deleted []bool, riderErr error, problems []error) {
	deleted = make([]bool, len(dels))
	var send []Update
	var at []int
	for i, d := range dels {
		if d.Ref != "" {
			send = append(send, d)
			at = append(at, i)
		}
	}
	if len(send) == 0 {
		if rider != nil {
			riderErr = ErrNotSent
		}
		return deleted, riderErr, nil
	}
	errs, riderErr := c.deleteAll(ghclient.SendOnce(ctx), repo, send, rider)
	for i, err := range errs {
		switch {
		case err == nil:
			deleted[at[i]] = true
		case errors.Is(err, ErrRejected):
			problems = append(problems, fmt.Errorf("%s changed since it was listed, left as it is: %w", send[i].Ref, err))
		default:
			// the push failed as a whole (it may have landed) and the
			// later ones were not sent: one error for all their refs
			return deleted, riderErr, append(problems, fmt.Errorf("delete %s and the %d after it: %w", send[i].Ref, len(send)-i-1, err))
		}
	}
	return deleted, riderErr, problems
}
