package shardstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
)

// maxListPages bounds a matching-refs listing (100 refs a page).
const maxListPages = 20

// Ref is one ref and the commit it points at.
type Ref struct {
	Name, Commit string
}

// Job is what the repository holds for one job.
type Job struct {
	ID     string
	Shards map[int]string // index → commit sha
	// Meta is what the shard commits say, filled by Describe.
	Meta map[int]ShardMeta
	Lock string // commit sha of the lock, "" if none
	// Unknown lists refs under the job's prefix that are neither a shard nor
	// the lock (never written by this package).
	Unknown []string
}

// Missing lists the indices in 0..total-1 that have no ref yet.
func (j *Job) Missing(total int) []int {
	var out []int
	for i := 0; i < total; i++ {
		if _, ok := j.Shards[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// Indices is every stored shard index, ascending.
func (j *Job) Indices() []int {
	out := make([]int, 0, len(j.Shards))
	for i := range j.Shards {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// listRefs lists refs under prefix (which ends with "/").
func (s *Store) listRefs(ctx context.Context, prefix string) ([]Ref, error) {
	var out []Ref
	opt := &github.ReferenceListOptions{Ref: strings.TrimSuffix(prefix, "/"), ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxListPages; page++ {
		refs, resp, err := s.Client.Git.ListMatchingRefs(ctx, s.Owner, s.Name, opt)
		if err != nil {
			return nil, fmt.Errorf("list refs %s: %w", prefix, err)
		}
		for _, r := range refs {
			// matching-refs matches by string prefix; keep only whole path segments.
			if strings.HasPrefix(r.GetRef(), prefix) {
				out = append(out, Ref{Name: r.GetRef(), Commit: r.GetObject().GetSHA()})
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
	return out, fmt.Errorf("list refs %s: more than %d pages", prefix, maxListPages)
}

// List reads the job's refs.
func (s *Store) List(ctx context.Context, jobID string) (*Job, error) {
	prefix := contract.JobRefs(jobID)
	refs, err := s.listRefs(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("shardstore: %w", err)
	}
	j := &Job{ID: jobID, Shards: map[int]string{}}
	for _, r := range refs {
		rest := strings.TrimPrefix(r.Name, prefix)
		if rest == "lock" {
			j.Lock = r.Commit
			continue
		}
		if n, ok := strings.CutPrefix(rest, "shards/"); ok {
			if i, err := natural(n); err == nil {
				j.Shards[i] = r.Commit
				continue
			}
		}
		j.Unknown = append(j.Unknown, r.Name)
	}
	return j, nil
}

// LockResult says who proceeds.
type LockResult struct {
	Won bool
	// Reentered: the lock was already ours (a re-run of the winning run).
	Reentered bool
	// Holder is the run holding the lock (us when Won).
	Holder Holder
}

// Lock decides whether this run (h) proceeds. When the listing j already
// shows a lock, its holder is read without trying; otherwise the run tries
// to create the lock ref with a commit naming h (tree is any tree in the
// repository, the caller's shard tree, since a commit needs one). A lock
// held by the same run id (a re-run) counts as won; a lock that vanished
// meanwhile (the job ended) counts as lost.
func (s *Store) Lock(ctx context.Context, j *Job, h Holder, tree string) (*LockResult, error) {
	var sha string
	if j.Lock == "" {
		var err error
		if sha, err = s.LockCommit(ctx, h, tree); err != nil {
			return nil, err
		}
	}
	return s.LockAt(ctx, j, h, sha)
}

// LockCommit makes the commit naming h that LockAt puts the lock ref at,
// so a caller can make it together with other requests; unused, it is
// only an object.
//
// With a pusher the commit is made here (no request) and LockAt sends it.
func (s *Store) LockCommit(ctx context.Context, h Holder, tree string) (string, error) {
	if s.Push != nil {
		c := s.localCommit(tree, formatLock(h), "")
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pending == nil {
			s.pending = map[string]refpush.Commit{}
		}
		s.pending[c.SHA()] = c
		return c.SHA(), nil
	}
	sha, err := s.commit(ctx, tree, formatLock(h))
	if err != nil {
		return "", fmt.Errorf("shardstore: lock job %s: %w", h.JobID, err)
	}
	return sha, nil
}

// LockAt is Lock with the commit LockCommit made ("" when the listing j
// shows a lock already: nothing is created then).
func (s *Store) LockAt(ctx context.Context, j *Job, h Holder, sha string) (*LockResult, error) {
	where := "shardstore: lock job " + h.JobID
	held := j.Lock
	if held == "" {
		if sha == "" {
			return nil, fmt.Errorf("%s: no lock commit", where)
		}
		ref := contract.LockRef(h.JobID)
		created, err := s.createLock(ctx, ref, sha)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if created {
			return &LockResult{Won: true, Holder: h}, nil
		}
		held, err = s.refCommit(ctx, ref)
		if errors.Is(err, ErrRefGone) {
			return &LockResult{Holder: Holder{JobID: h.JobID, RunID: "(a run that already finished)"}}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	holder, err := s.holder(ctx, held)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if holder.RunID == h.RunID && holder.JobID == h.JobID {
		return &LockResult{Won: true, Reentered: true, Holder: holder}, nil
	}
	return &LockResult{Holder: holder}, nil
}

// createLock creates the lock ref at sha: one push of the commit
// LockCommit made when pushing, else the REST API's ref creation.
func (s *Store) createLock(ctx context.Context, ref, sha string) (bool, error) {
	if s.Push == nil {
		return s.createRef(ctx, ref, sha)
	}
	s.mu.Lock()
	c, ok := s.pending[sha]
	s.mu.Unlock()
	if !ok {
		return false, fmt.Errorf("no lock commit %s made by this store", sha)
	}
	return s.pushCreate(ctx, ref, nil, &c)
}

func (s *Store) holder(ctx context.Context, commit string) (Holder, error) {
	c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, commit)
	if err != nil {
		return Holder{}, fmt.Errorf("read lock commit %s: %w", commit, err)
	}
	h, err := ParseLockMessage(c.GetMessage())
	if err != nil {
		return Holder{}, fmt.Errorf("lock commit %s: %w", commit, err)
	}
	return h, nil
}
