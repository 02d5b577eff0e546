package shardstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

// Store reads and writes job refs in one repository. Client should be built
// with ghclient.New and RetryUnsafe: every write here is safe to repeat
// (git objects are content-addressed; a repeated ref creation is recognised).
type Store struct {
	Client      *github.Client
	Owner, Name string
	// Now dates the commits and ages them in Sweep; nil = time.Now.
	Now func() time.Time
	// Parallel bounds concurrent reads in Describe and Read; 0 =
	// DefaultParallel.
	Parallel int
	// Push, when set, stores a piece (blob, tree, commit, ref) and takes
	// the lock in one request each, a git push whose ref update is a
	// compare-and-swap, and deletes a job's refs, or a sweep's, in one.
	Push *refpush.Client

	mu      sync.Mutex
	pending map[string]refpush.Commit // lock commits made here, not pushed yet
}

// DefaultParallel reads a job of up to 24 shards (1.5 MB of context) in
// one round trip, well under GitHub's limit of 100 concurrent requests.
const DefaultParallel = 24

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
	// Replaced is true when the piece replaced one of an older dispatch.
	Replaced bool
	// Superseded is true when a newer dispatch of the job already stored
	// this index (its timestamp in NewerTimestamp): the piece was not
	// stored and Commit is empty.
	Superseded     bool
	NewerTimestamp string
}

var signature = github.CommitAuthor{Name: github.String("mention-runner"), Email: github.String("mention-runner@users.noreply.github.com")}

// localCommit is the commit commitOn asks GitHub for, made here: its id is
// known without a request, and a push carries it.
func (s *Store) localCommit(tree, msg, parent string) refpush.Commit {
	c := refpush.Commit{Tree: tree, Message: msg,
		Sig: refpush.Signature{Name: signature.GetName(), Email: signature.GetEmail(), At: s.now().Truncate(time.Second)}}
	if parent != "" {
		c.Parents = []string{parent}
	}
	return c
}

// commit creates a root commit of tree dated now.
func (s *Store) commit(ctx context.Context, tree, msg string) (string, error) {
	return s.commitOn(ctx, tree, msg, "")
}

// commitOn creates a commit of tree dated now, on parent unless it is "".
func (s *Store) commitOn(ctx context.Context, tree, msg, parent string) (string, error) {
	sig := signature
	sig.Date = &github.Timestamp{Time: s.now().Truncate(time.Second)}
	c := &github.Commit{Message: github.String(msg), Tree: &github.Tree{SHA: github.String(tree)}, Author: &sig, Committer: &sig}
	if parent != "" {
		c.Parents = []*github.Commit{{SHA: github.String(parent)}}
	}
	c, _, err := s.Client.Git.CreateCommit(ctx, s.Owner, s.Name, c, nil)
	if err != nil {
		return "", fmt.Errorf("create commit: %w", err)
	}
	return c.GetSHA(), nil
}

// Put stores a piece under its shard ref. When the ref already exists, the
// payload timestamps decide (a failed dispatch is re-sent later, with a newer
// timestamp, under the same job id): the same piece of the same dispatch is
// fine (Duplicate); a piece of an older dispatch is replaced (Replaced); a
// piece of a newer dispatch means this one is stale and is not stored
// (Superseded); other content with the same timestamp is a
// *transport.Error of kind conflicting_duplicate.
func (s *Store) Put(ctx context.Context, p Piece) (*Stored, error) {
	st := &Stored{Piece: p}
	where := fmt.Sprintf("shardstore: store shard %d of job %s", p.Index, p.JobID)
	st.Blob = blobSHA([]byte(p.B64))
	msg := formatShard(ShardMeta{JobID: p.JobID, Index: p.Index, Total: p.Total, Timestamp: p.Timestamp, Blob: st.Blob})
	ref := contract.ShardRef(p.JobID, p.Index)
	if s.Push != nil {
		return s.putPushed(ctx, st, ref, msg, where)
	}
	// The tree carries the piece as content: GitHub writes the blob with
	// it (one request, not two), and the blob's id is git's hash of it.
	tree, _, err := s.Client.Git.CreateTree(ctx, s.Owner, s.Name, "", []*github.TreeEntry{{
		Path: github.String(pieceFile), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String(p.B64),
	}})
	if err != nil {
		return nil, fmt.Errorf("%s: create tree: %w", where, err)
	}
	st.Tree = tree.GetSHA()
	if want, _ := treeSHA(st.Blob); st.Tree != want {
		return nil, fmt.Errorf("%s: create tree: GitHub answered tree %s, not %s (the piece as one blob)", where, st.Tree, want)
	}
	if st.Commit, err = s.commit(ctx, st.Tree, msg); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	created, err := s.createRef(ctx, ref, st.Commit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return s.settled(ctx, st, ref, msg, created, where)
}

// putPushed is Put as one push: the piece's blob, tree and commit with
// the ref's creation.
func (s *Store) putPushed(ctx context.Context, st *Stored, ref, msg, where string) (*Stored, error) {
	objs := pieceObjects(st)
	c := s.localCommit(st.Tree, msg, "")
	st.Commit = c.SHA()
	created, err := s.pushCreate(ctx, ref, objs, &c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return s.settled(ctx, st, ref, msg, created, where)
}

// pieceObjects are st's blob and tree, as a push carries them; it sets
// st.Tree.
func pieceObjects(st *Stored) []refpush.Object {
	tree, _ := pieceTree(st.Blob) // a blob id made here is well formed
	st.Tree = tree.SHA()
	return []refpush.Object{refpush.Blob([]byte(st.B64)), tree}
}

// settled finishes a Put whose creation of ref was tried: when the ref
// existed, what it holds decides.
func (s *Store) settled(ctx context.Context, st *Stored, ref, msg string, created bool, where string) (*Stored, error) {
	if created {
		return st, nil
	}
	// A replacement can lose a race to another one; decide again then.
	for range maxReplaceTries {
		done, err := s.settle(ctx, st, ref, msg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if done {
			return st, nil
		}
	}
	return nil, fmt.Errorf("%s: %s kept changing while replacing an older dispatch's piece", where, ref)
}

// maxReplaceTries bounds how often Put re-reads a ref that moved under it.
// Each lost race means another writer made progress, so a Put among N
// concurrent replacements needs at most N-1 retries; 16 covers any realistic
// number of re-sent dispatches of one job.
const maxReplaceTries = 16

// settle decides what to do with st given what ref holds now. done is false
// when a replacement lost a race and the ref must be read again.
func (s *Store) settle(ctx context.Context, st *Stored, ref, msg string) (done bool, err error) {
	p := st.Piece
	existing, err := s.refCommit(ctx, ref)
	if err != nil {
		return false, err
	}
	c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, existing)
	if err != nil {
		return false, fmt.Errorf("read existing commit %s: %w", existing, err)
	}
	m, err := ParseShardMessage(c.GetMessage())
	if err != nil {
		return false, &CorruptError{Ref: ref, Reason: err.Error()}
	}
	cmp, err := CompareTimestamps(m.Timestamp, p.Timestamp)
	if err != nil {
		return false, &CorruptError{Ref: ref, Reason: err.Error()}
	}
	switch {
	case cmp > 0:
		st.Commit, st.Superseded, st.NewerTimestamp = "", true, m.Timestamp
		return true, nil
	case cmp == 0 && c.GetTree().GetSHA() == st.Tree:
		st.Commit, st.Duplicate = existing, true
		return true, nil
	case cmp == 0:
		return false, &transport.Error{Kind: transport.KindConflictingDuplicate, JobID: p.JobID, Index: p.Index,
			Msg: fmt.Sprintf("shard %d was already stored (%s) with different content", p.Index, ref)}
	}
	// An older dispatch's piece: replace it. The new commit's parent is the
	// old one and the update is not forced, so it succeeds only if the ref
	// still points there (a compare-and-swap: a newer piece is never lost).
	if s.Push != nil {
		return s.replacePushed(ctx, st, ref, msg, existing)
	}
	sha, err := s.commitOn(ctx, st.Tree, msg, existing)
	if err != nil {
		return false, err
	}
	_, _, err = s.Client.Git.UpdateRef(ctx, s.Owner, s.Name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}, false)
	if notFastForward(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("replace %s: %w", ref, err)
	}
	st.Commit, st.Replaced = sha, true
	return true, nil
}

// replacePushed replaces the older piece at existing in one push whose
// update is an exact compare-and-swap from existing. done is false when
// the ref moved meanwhile.
func (s *Store) replacePushed(ctx context.Context, st *Stored, ref, msg, existing string) (done bool, err error) {
	c := s.localCommit(st.Tree, msg, existing)
	sha := c.SHA()
	// the blob and tree again: a refused push may not have kept them
	err = s.push(ctx, pieceObjects(st), &c, refpush.Update{Ref: ref, Old: existing, New: sha})
	switch {
	case errors.Is(err, refpush.ErrRejected):
		return false, nil
	case refpush.MaybeApplied(err):
		// read back: ours means it landed; anything else is decided again
		if cur, rerr := s.refCommit(ctx, ref); rerr != nil || cur != sha {
			return false, nil
		}
	case err != nil:
		return false, fmt.Errorf("replace %s: %w", ref, err)
	}
	st.Commit, st.Replaced = sha, true
	return true, nil
}

// push sends objs and c (when not nil) with updates in one request; the
// error is the push's or its first update's.
func (s *Store) push(ctx context.Context, objs []refpush.Object, c *refpush.Commit, updates ...refpush.Update) error {
	var commits []refpush.Commit
	if c != nil {
		commits = []refpush.Commit{*c}
	}
	res, err := s.Push.PushObjects(ctx, s.Owner+"/"+s.Name, objs, commits, updates)
	if err != nil {
		return err
	}
	return errors.Join(res...)
}

// pushCreate creates ref at c in one push (objs: what c needs that the
// repository may lack); created is false when the ref exists. After a
// lost answer the ref is read: at c, the push landed.
func (s *Store) pushCreate(ctx context.Context, ref string, objs []refpush.Object, c *refpush.Commit) (created bool, err error) {
	sha := c.SHA()
	err = s.push(ctx, objs, c, refpush.Update{Ref: ref, New: sha})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, refpush.ErrRejected):
		return false, nil // it exists: the caller reads what it holds
	case !refpush.MaybeApplied(err):
		return false, fmt.Errorf("create ref %s: %w", ref, err)
	}
	cur, rerr := s.refCommit(ctx, ref)
	switch {
	case rerr == nil:
		return cur == sha, nil
	case errors.Is(rerr, ErrRefGone):
		return false, fmt.Errorf("create ref %s: %w", ref, err) // not applied
	}
	return false, errors.Join(fmt.Errorf("create ref %s: %w", ref, err), rerr)
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

// notFastForward recognises GitHub's 422 "Update is not a fast forward".
func notFastForward(err error) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(ge.Message), "fast forward")
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
