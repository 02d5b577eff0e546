package shardstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
)

// SweepOptions bound one sweep.
type SweepOptions struct {
	MaxAge time.Duration // refs whose commit is older are deleted; 0 = 24h
	// MaxChecks bounds the commits inspected (one request each); 0 = 10.
	// Refs are visited in random order, so successive runs cover them all.
	MaxChecks int
	Skip      string     // a job id left alone (the caller's own job)
	Rand      *rand.Rand // nil = randomly seeded
}

// SweepResult says what a sweep did. Errors are per ref and not fatal.
type SweepResult struct {
	Listed, Checked int
	Deleted         []string
	Errors          []error
}

// Sweep deletes job refs whose commit date is older than MaxAge. It is
// best-effort: only a failure to list is returned as an error.
func (s *Store) Sweep(ctx context.Context, o SweepOptions) (*SweepResult, error) {
	if o.MaxAge <= 0 {
		o.MaxAge = 24 * time.Hour
	}
	if o.MaxChecks <= 0 {
		o.MaxChecks = 10
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	refs, err := s.listRefs(ctx, contract.JobRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("shardstore: sweep: %w", err)
	}
	res := &SweepResult{Listed: len(refs)}
	if o.Skip != "" {
		keep := refs[:0]
		for _, r := range refs {
			if !strings.HasPrefix(r.Name, contract.JobRefs(o.Skip)) {
				keep = append(keep, r)
			}
		}
		refs = keep
	}
	o.Rand.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	cutoff := s.now().Add(-o.MaxAge)
	refs = refs[:min(len(refs), o.MaxChecks)]
	res.Checked = len(refs)
	// Each ref is read beside the others, and deleted beside them or with
	// them in one push: a sweep costs a round trip to list, one to read
	// and one to delete, not two per ref.
	expired := make([]refpush.Update, len(refs)) // for Push: the refs to delete at the commit judged
	deleted := make([]bool, len(refs))
	errs := make([]error, len(refs))
	s.each(ctx, len(refs), func(ctx context.Context, k int) bool {
		r := refs[k]
		c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, r.Commit)
		if err != nil {
			errs[k] = fmt.Errorf("sweep: read %s: %w", r.Name, err)
			return true
		}
		when := c.GetCommitter().GetDate().Time
		if when.IsZero() {
			when = c.GetAuthor().GetDate().Time
		}
		if when.IsZero() || !when.Before(cutoff) {
			return true
		}
		if s.Push != nil {
			expired[k] = refpush.Update{Ref: r.Name, Old: r.Commit} // deleted together below
			return true
		}
		if err := s.deleteRef(ctx, r.Name); err != nil {
			errs[k] = fmt.Errorf("sweep: %w", err)
			return true
		}
		deleted[k] = true
		return true
	})
	if s.Push != nil {
		// A ref that moved since it was listed (a shard replaced) is left.
		var problems []error
		deleted, problems = s.Push.DeleteListed(ctx, s.Owner+"/"+s.Name, expired)
		for _, err := range problems {
			errs = append(errs, fmt.Errorf("sweep: %w", err))
		}
	}
	for _, err := range errs {
		if err != nil {
			res.Errors = append(res.Errors, err)
		}
	}
	for k, r := range refs {
		if deleted[k] {
			res.Deleted = append(res.Deleted, r.Name)
		}
	}
	return res, nil
}

// DeleteJob deletes every ref of a job (when the job ends). Refs already
// gone are fine.
func (s *Store) DeleteJob(ctx context.Context, jobID string) error {
	refs, err := s.listRefs(ctx, contract.JobRefs(jobID))
	if err == nil {
		err = s.deleteListed(ctx, refs)
	}
	if err != nil {
		return fmt.Errorf("shardstore: delete job %s: %w", jobID, err)
	}
	return nil
}

// deleteListed deletes refs. With a pusher that is one push of deletes
// (a hundred a push), each from the commit listed: a ref moved since (a
// newer piece) or gone is left alone, for the sweep.
func (s *Store) deleteListed(ctx context.Context, refs []Ref) error {
	if s.Push != nil {
		ups := make([]refpush.Update, len(refs))
		for i, r := range refs {
			ups[i] = refpush.Update{Ref: r.Name, Old: r.Commit}
		}
		for _, err := range s.Push.DeleteAll(ctx, s.Owner+"/"+s.Name, ups) {
			if err != nil && !errors.Is(err, refpush.ErrRejected) {
				return err // the push's as a whole: the same for the rest
			}
		}
		return nil
	}
	for _, r := range refs {
		if err := s.deleteRef(ctx, r.Name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) deleteRef(ctx context.Context, ref string) error {
	_, err := s.Client.Git.DeleteRef(ctx, s.Owner, s.Name, ref)
	if err != nil && !notFound(err) && !refGone422(err) {
		return fmt.Errorf("delete %s: %w", ref, err)
	}
	return nil
}
