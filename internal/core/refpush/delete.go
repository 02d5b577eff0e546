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
	errs := make([]error, len(dels))
	fail := func(from int, err error) []error {
		for k := from; k < len(errs); k++ {
			errs[k] = err
		}
		return errs
	}
	for _, d := range dels {
		if d.Old == "" || d.New != "" {
			return fail(0, fmt.Errorf("refpush: delete %s: want the ref's current object as Old and no New (got %q, %q): %w", d.Ref, d.Old, d.New, ErrInvalid))
		}
	}
	per := c.MaxUpdates
	if per <= 0 {
		per = DefaultMaxUpdates
	}
	for start := 0; start < len(dels); start += per {
		end := min(start+per, len(dels))
		res, err := c.Push(ctx, repo, nil, dels[start:end])
		if err != nil {
			return fail(start, err)
		}
		copy(errs[start:end], res)
	}
	return errs
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
		return deleted, nil
	}
	for i, err := range c.DeleteAll(ghclient.SendOnce(ctx), repo, send) {
		switch {
		case err == nil:
			deleted[at[i]] = true
		case errors.Is(err, ErrRejected):
			problems = append(problems, fmt.Errorf("%s changed since it was listed, left as it is: %w", send[i].Ref, err))
		default:
			// the push failed as a whole (it may have landed) and the
			// later ones were not sent: one error for all their refs
			return deleted, append(problems, fmt.Errorf("delete %s and the %d after it: %w", send[i].Ref, len(send)-i-1, err))
		}
	}
	return deleted, problems
}
