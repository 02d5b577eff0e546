package refstate

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
)

// SetSharedMany moves each ref of from (ref → the commit it must be at
// now) to the shared commit of status, as SetShared does for one: with
// Push, in one request per refpush.DefaultMaxUpdates refs, each move a
// compare-and-swap; a ref that moved meanwhile is left as it is and
// reported (ErrLost), unless it holds status already. Without Push, each
// ref is set on its own (SetShared, forced).
//
// It returns an error per ref that was not set; err is for the requests
// as a whole: none of from is known to be set then (some may be, and a
// repeat finds them so).
func (s *Store) SetSharedMany(ctx context.Context, status string, from map[string]string) (failed map[string]error, err error) {
	failed = map[string]error{}
	refs := make([]string, 0, len(from))
	for ref := range from {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	if s.Push == nil {
		for _, ref := range refs {
			if _, err := s.SetShared(ctx, ref, status); err != nil {
				failed[ref] = err
			}
		}
		return failed, nil
	}
	m := sharedMark(status, s.now())
	c := markCommit("", message(status, ""), m.At)
	for len(refs) > 0 {
		chunk := refs[:min(len(refs), refpush.DefaultMaxUpdates)]
		refs = refs[len(chunk):]
		ups := make([]refpush.Update, len(chunk))
		for i, ref := range chunk {
			ups[i] = refpush.Update{Ref: ref, Old: from[ref], New: m.Commit}
		}
		res, perr := s.Push.Push(ctx, s.Owner+"/"+s.Name, []refpush.Commit{c}, ups)
		if perr != nil {
			return nil, fmt.Errorf("refstate: set %d refs %s: %w", len(from), status, perr)
		}
		for i, r := range res {
			if r == nil {
				continue
			}
			ref := chunk[i]
			if !errors.Is(r, refpush.ErrRejected) {
				failed[ref] = r
				continue
			}
			// moved since it was read: set by an earlier try whose answer
			// was lost, or taken over
			cur, rerr := s.Read(ctx, ref)
			switch {
			case rerr != nil:
				failed[ref] = rerr
			case cur == nil || cur.Status != status:
				failed[ref] = fmt.Errorf("refstate: %s moved before it was set %s: %w", ref, status, ErrLost)
			}
		}
	}
	s.remember(m)
	return failed, nil
}
