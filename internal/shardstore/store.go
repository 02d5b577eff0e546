package shardstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/transport"
)

// RefPrefix is where every job's refs live.
const RefPrefix = "refs/mention-runner/jobs/"

// JobPrefix is the ref prefix of one job ("refs/mention-runner/jobs/<id>/").
func JobPrefix(jobID string) string { return RefPrefix + jobID + "/" }

// ShardRef is the ref of one shard.
func ShardRef(jobID string, index int) string {
	return JobPrefix(jobID) + "shards/" + strconv.Itoa(index)
}

// LockRef is the ref whose creation decides which run proceeds.
func LockRef(jobID string) string { return JobPrefix(jobID) + "lock" }

// Store reads and writes job refs in one repository. Client should be built
// with ghclient.New and RetryUnsafe: every write here is safe to repeat
// (git objects are content-addressed; a repeated ref creation is recognised).
type Store struct {
	Client      *github.Client
	Owner, Name string
	// Now dates the commits and ages them in Sweep; nil = time.Now.
	Now func() time.Time
	// Parallel bounds concurrent reads in Read; 0 = 4.
	Parallel int
}

// New returns a store for repo ("owner/name").
func New(client *github.Client, repo string, now func() time.Time) (*Store, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("shardstore: repository %q is not owner/name", repo)
	}
	return &Store{Client: client, Owner: owner, Name: name, Now: now}, nil
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// Piece is one agent_shard payload.
type Piece struct {
	JobID     string
	Index     int
	Total     int
	Timestamp string
	B64       string // the context_b64 piece
}

// PieceOf takes the piece out of an agent_shard payload.
func PieceOf(p transport.Payload) (Piece, error) {
	if p.Shard == nil {
		return Piece{}, errors.New("shardstore: payload has no shard field")
	}
	return Piece{JobID: p.JobID, Index: p.Shard.Index, Total: p.Shard.Total, Timestamp: p.Timestamp, B64: p.ContextB64}, nil
}

// Payload turns the piece back into the payload it came from.
func (p Piece) Payload() transport.Payload {
	return transport.Payload{JobID: p.JobID, Shard: &transport.Shard{Index: p.Index, Total: p.Total}, ContextB64: p.B64, Timestamp: p.Timestamp}
}

// Stored is a piece as it sits in the repository.
type Stored struct {
	Piece
	Blob, Tree, Commit string
	// Duplicate is true when the ref already held the same piece (a re-run
	// or a redelivered event).
	Duplicate bool
}

var signature = github.CommitAuthor{Name: github.String("mention-runner"), Email: github.String("mention-runner@users.noreply.github.com")}

// commit creates a root commit of tree dated now.
func (s *Store) commit(ctx context.Context, tree, msg string) (string, error) {
	sig := signature
	sig.Date = &github.Timestamp{Time: s.now().Truncate(time.Second)}
	c, _, err := s.Client.Git.CreateCommit(ctx, s.Owner, s.Name, &github.Commit{
		Message: github.String(msg), Tree: &github.Tree{SHA: github.String(tree)}, Author: &sig, Committer: &sig,
	}, nil)
	if err != nil {
		return "", fmt.Errorf("create commit: %w", err)
	}
	return c.GetSHA(), nil
}

// Put stores a piece under its shard ref. A ref that already holds the same
// piece is fine (Duplicate); one holding different content is a
// *transport.Error of kind conflicting_duplicate.
func (s *Store) Put(ctx context.Context, p Piece) (*Stored, error) {
	st := &Stored{Piece: p}
	where := fmt.Sprintf("shardstore: store shard %d of job %s", p.Index, p.JobID)
	blob, _, err := s.Client.Git.CreateBlob(ctx, s.Owner, s.Name, &github.Blob{Content: github.String(p.B64), Encoding: github.String("utf-8")})
	if err != nil {
		return nil, fmt.Errorf("%s: create blob: %w", where, err)
	}
	st.Blob = blob.GetSHA()
	tree, _, err := s.Client.Git.CreateTree(ctx, s.Owner, s.Name, "", []*github.TreeEntry{{
		Path: github.String(pieceFile), Mode: github.String("100644"), Type: github.String("blob"), SHA: github.String(st.Blob),
	}})
	if err != nil {
		return nil, fmt.Errorf("%s: create tree: %w", where, err)
	}
	st.Tree = tree.GetSHA()
	msg := formatShard(ShardMeta{JobID: p.JobID, Index: p.Index, Total: p.Total, Timestamp: p.Timestamp, Blob: st.Blob})
	if st.Commit, err = s.commit(ctx, st.Tree, msg); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	ref := ShardRef(p.JobID, p.Index)
	created, err := s.createRef(ctx, ref, st.Commit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if created {
		return st, nil
	}
	// The ref exists: the same piece again is harmless, other content is not.
	existing, err := s.refCommit(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, existing)
	if err != nil {
		return nil, fmt.Errorf("%s: read existing commit %s: %w", where, existing, err)
	}
	if c.GetTree().GetSHA() != st.Tree {
		return nil, &transport.Error{Kind: transport.KindConflictingDuplicate, JobID: p.JobID, Index: p.Index,
			Msg: fmt.Sprintf("shard %d was already stored (%s) with different content", p.Index, ref)}
	}
	st.Commit, st.Duplicate = existing, true
	return st, nil
}

// createRef creates ref at sha; created is false when the ref exists.
func (s *Store) createRef(ctx context.Context, ref, sha string) (created bool, err error) {
	_, _, err = s.Client.Git.CreateRef(ctx, s.Owner, s.Name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}})
	if err == nil {
		return true, nil
	}
	if refExists(err) {
		return false, nil
	}
	return false, fmt.Errorf("create ref %s: %w", ref, err)
}

// refExists recognises GitHub's 422 "Reference already exists".
func refExists(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(ge.Message), "already exists")
}

func notFound(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound
}

// ErrRefGone means a ref vanished between two requests (the job ended).
var ErrRefGone = errors.New("ref no longer exists")

// refCommit returns the commit a ref points at.
func (s *Store) refCommit(ctx context.Context, ref string) (string, error) {
	r, _, err := s.Client.Git.GetRef(ctx, s.Owner, s.Name, ref)
	if notFound(err) {
		return "", fmt.Errorf("read ref %s: %w", ref, ErrRefGone)
	}
	if err != nil {
		return "", fmt.Errorf("read ref %s: %w", ref, err)
	}
	if t := r.GetObject().GetType(); t != "commit" {
		return "", fmt.Errorf("ref %s points at a %s, not a commit", ref, t)
	}
	return r.GetObject().GetSHA(), nil
}

// refGone422 recognises GitHub's 422 "Reference does not exist" on delete.
func refGone422(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(ge.Message), "does not exist")
}
