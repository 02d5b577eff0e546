// Package refstate keeps small durable states in git refs of a repository
// (CONTROL): a ref points at a commit whose message names the state and who
// holds it, and whose date says when it was set.
//
// Every change is a compare-and-swap GitHub already offers: creating a ref
// that exists fails, and a non-forced update succeeds only when the new
// commit descends from the ref's current one. A new state is always
// committed on top of the state it replaces, so exactly one of several
// writers racing from the same state wins. A write whose answer is lost is
// recognised on the retry by its commit (each writer's commits are its own):
// "Reference already exists" pointing at our commit means we created it.
//
// With a pusher (Store.Push) a state costs one request: the commit is made
// here (its id known before anything is sent) and pushed with its ref
// update, an exact compare-and-swap (the ref must be missing, or at the
// state the new one replaces).
package refstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
)

// EmptyTree is git's empty tree. Every repository has it, so a state
// commit needs no tree to be created first.
const EmptyTree = refpush.EmptyTree

// messagePrefix starts every state commit's message.
const messagePrefix = "mention-runner state: "

// Mark is one state commit.
type Mark struct {
	Commit string
	Status string    // e.g. claimed, dispatched, running, done
	Holder string    // who set it: a dispatcher id, a workflow run
	At     time.Time // the commit date (whole seconds)
	Parent string    // the state it replaced, "" for a first state
}

// Store reads and writes state refs in one repository. Its client should
// retry POST/PATCH (ghclient RetryUnsafe): every write here is recognised
// when repeated. Commits and ref updates are retried after a lost answer
// even by a client that does not (ghclient.Repeatable), and an update
// whose answer stayed lost is read back.
type Store struct {
	Client      *github.Client
	Owner, Name string
	Now         func() time.Time // commit dates and ages; nil = time.Now
	// Push, when set, writes a state commit and its ref in one request
	// (a git push whose update is a compare-and-swap) instead of two.
	Push *refpush.Client

	mu    sync.Mutex
	marks map[string]Mark // by commit: commits never change

	// ensuring admits one EnsureShared at a time (the rest then find the
	// commit made); a channel, not a mutex, so that a waiter counts as
	// blocked in a testing/synctest bubble.
	ensuring chan struct{}

	creates createQueue // Creates marked Together waiting for a push
}

// New returns a store for repo ("owner/name").
func New(client *github.Client, repo string, now func() time.Time) (*Store, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("refstate: repository %q is not owner/name", repo)
	}
	return &Store{Client: client, Owner: owner, Name: name, Now: now}, nil
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *Store) remember(m Mark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.marks == nil {
		s.marks = map[string]Mark{}
	}
	s.marks[m.Commit] = m
}

func (s *Store) known(sha string) (Mark, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.marks[sha]
	return m, ok
}

// NewMark commits a state on top of parent ("" = a first state). The
// commit is not on any ref until Create or Advance puts it there. Commits
// are content-addressed: two writers must use different holder names, or
// the same state set in the same second is one commit both take as theirs.
// With a pusher the commit is made here and costs no request: it is sent
// with the push that puts a ref at it.
func (s *Store) NewMark(ctx context.Context, status, holder, parent string) (Mark, error) {
	at := s.now().Truncate(time.Second)
	if s.Push == nil {
		return s.newMarkAt(ctx, status, holder, parent, at)
	}
	if err := checkStatus(status); err != nil {
		return Mark{}, err
	}
	holder = strings.ReplaceAll(holder, "\n", " ")
	m := Mark{Commit: markCommit(parent, message(status, holder), at).SHA(), Status: status, Holder: holder, At: at, Parent: parent}
	s.remember(m)
	return m, nil
}

// CreateNew creates ref at a new first state (status, holder) unless the
// ref exists: Create of a NewMark, one request with a pusher. It returns
// the state the ref holds afterwards; created is true when that is the
// new one.
func (s *Store) CreateNew(ctx context.Context, ref, status, holder string) (cur Mark, created bool, err error) {
	m, err := s.NewMark(ctx, status, holder, "")
	if err != nil {
		return Mark{}, false, err
	}
	return s.Create(ctx, ref, m)
}

func checkStatus(status string) error {
	if strings.ContainsAny(status, "\n ") || status == "" {
		return fmt.Errorf("refstate: bad status %q", status)
	}
	return nil
}

// The author and committer of every state commit.
const (
	markName  = "mention-runner"
	markEmail = "mention-runner@users.noreply.github.com"
)

func (s *Store) newMarkAt(ctx context.Context, status, holder, parent string, at time.Time) (Mark, error) {
	if err := checkStatus(status); err != nil {
		return Mark{}, err
	}
	holder = strings.ReplaceAll(holder, "\n", " ")
	sig := github.CommitAuthor{Name: github.String(markName), Email: github.String(markEmail),
		Date: &github.Timestamp{Time: at}}
	c := &github.Commit{Message: github.String(message(status, holder)), Tree: &github.Tree{SHA: github.String(EmptyTree)},
		Author: &sig, Committer: &sig}
	if parent != "" {
		c.Parents = []*github.Commit{{SHA: github.String(parent)}}
	}
	// The same bytes sent again make the same commit (git objects are
	// addressed by their content): its retry creates nothing new.
	got, _, err := s.Client.Git.CreateCommit(ghclient.Repeatable(ctx), s.Owner, s.Name, c, nil)
	if err != nil {
		return Mark{}, fmt.Errorf("refstate: commit state %s: %w", status, err)
	}
	m := Mark{Commit: got.GetSHA(), Status: status, Holder: holder, At: at, Parent: parent}
	s.remember(m)
	return m, nil
}

// sharedPeriod is how long one shared state commit (SetShared) is used:
// its date tells a state's age within that.
const sharedPeriod = time.Hour

// sharedMark is the state commit every writer of status shares within the
// sharedPeriod holding at: no holder, no parent, dated at the period's
// start. Git objects are addressed by their content, so its sha is known
// without a request (markCommit); only the period's first writer creates it.
func sharedMark(status string, at time.Time) Mark {
	at = at.UTC().Truncate(sharedPeriod)
	return Mark{Commit: markCommit("", message(status, ""), at).SHA(), Status: status, At: at}
}

// pushed is what a push of m sends: its commit when this package makes
// it byte for byte (the repository may lack it), else nothing (a commit
// read from the repository, or written by another kind of writer).
func pushed(m Mark) []refpush.Commit {
	c := markCommit(m.Parent, message(m.Status, m.Holder), m.At)
	if c.SHA() != m.Commit {
		return nil
	}
	return []refpush.Commit{c}
}

// markCommit is the commit NewMark sends, as git stores it: its id is
// known without a request.
func markCommit(parent, msg string, at time.Time) refpush.Commit {
	c := refpush.Commit{Tree: EmptyTree, Message: msg, Sig: refpush.Signature{Name: markName, Email: markEmail, At: at}}
	if parent != "" {
		c.Parents = []string{parent}
	}
	return c
}

// EnsureShared makes sure the current period's shared commit of status
// exists, so that a SetShared after it is one request: it reads the commit
// (a caller sends that beside other requests, off its critical path) and
// makes it when missing. A commit this store knows costs nothing.
func (s *Store) EnsureShared(ctx context.Context, status string) error {
	s.mu.Lock()
	if s.ensuring == nil {
		s.ensuring = make(chan struct{}, 1)
	}
	sem := s.ensuring
	s.mu.Unlock()
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		return ctx.Err()
	}
	m := sharedMark(status, s.now())
	if _, ok := s.known(m.Commit); ok {
		return nil
	}
	_, resp, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, m.Commit)
	switch {
	case err == nil:
		s.remember(m)
		return nil
	case resp == nil || resp.StatusCode != http.StatusNotFound:
		return fmt.Errorf("refstate: read the shared %s commit: %w", status, err)
	}
	made, err := s.newMarkAt(ctx, status, "", "", m.At)
	if err != nil {
		return err
	}
	s.remember(made)
	return nil
}

// SetShared points ref at the shared commit of status (sharedMark),
// created when the ref is missing and forced otherwise: for a final state
// that any writer may set and nothing moves on from (a job done). Usually
// one request, the ref update; the period's first writer also makes the
// commit. Repeating it is safe.
func (s *Store) SetShared(ctx context.Context, ref, status string) (Mark, error) {
	m := sharedMark(status, s.now())
	put := func() error {
		for range 3 {
			_, _, err := s.Client.Git.UpdateRef(ghclient.Repeatable(ctx), s.Owner, s.Name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(m.Commit)}}, true)
			if err != nil && !isStatus(err, http.StatusUnprocessableEntity, "") {
				// The answer may be lost while the ref moved: look once.
				if got, rerr := s.Read(ctx, ref); rerr == nil && got != nil && got.Commit == m.Commit {
					return nil
				}
			}
			if !isStatus(err, http.StatusUnprocessableEntity, "reference does not exist") {
				return err
			}
			if _, created, err := s.Create(ctx, ref, m); err != nil || created {
				return err
			}
			// created by another writer meanwhile: force it again
		}
		return fmt.Errorf("the ref kept appearing and vanishing")
	}
	err := put()
	if isStatus(err, http.StatusUnprocessableEntity, "object does not exist") {
		made, merr := s.newMarkAt(ctx, status, "", "", m.At)
		if merr != nil {
			return Mark{}, merr
		}
		// A server that writes commits differently gives another sha: use
		// it (each writer then makes its own commit, as NewMark does).
		m = made
		err = put()
	}
	if err != nil {
		return Mark{}, fmt.Errorf("refstate: set %s %s: %w", ref, status, err)
	}
	s.remember(m)
	return m, nil
}

func message(status, holder string) string {
	return messagePrefix + status + "\n\nholder: " + holder + "\n"
}

// GrantStatus is the state a write-budget ledger commit stands for: a
// dispatcher claims mentions with its grants' commits
// (contract.PaceMessagePrefix; writebudget.Grant), so the claim commit
// costs no request of its own. The holder is the state's "holder".
const GrantStatus = "claimed"

// parseMessage reads a state commit's message.
func parseMessage(msg string) (status, holder string, err error) {
	if body, ok := strings.CutPrefix(msg, contract.PaceMessagePrefix); ok {
		var g struct {
			Holder string `json:"holder"`
		}
		if err := json.Unmarshal([]byte(body), &g); err != nil || g.Holder == "" {
			return "", "", fmt.Errorf("a write-budget commit without a holder (%v)", err)
		}
		return GrantStatus, strings.ReplaceAll(g.Holder, "\n", " "), nil
	}
	first, rest, _ := strings.Cut(msg, "\n")
	status, ok := strings.CutPrefix(first, messagePrefix)
	if !ok || status == "" || strings.Contains(status, " ") {
		return "", "", fmt.Errorf("not a state commit (message %q)", truncate(first, 80))
	}
	for _, line := range strings.Split(rest, "\n") {
		if h, ok := strings.CutPrefix(line, "holder: "); ok {
			holder = h
		}
	}
	return status, holder, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// CorruptError is a state ref that does not point at a state commit.
type CorruptError struct {
	Ref, Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("refstate: %s is not a state ref: %s; delete it if nothing else uses it", e.Ref, e.Reason)
}

// Read returns the state ref points at, or nil when the ref does not exist.
func (s *Store) Read(ctx context.Context, ref string) (*Mark, error) {
	r, resp, err := s.Client.Git.GetRef(ctx, s.Owner, s.Name, strings.TrimPrefix(ref, "refs/"))
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("refstate: read %s: %w", ref, err)
	}
	if r.GetRef() != ref {
		// GitHub answers a prefix with a list; a single other ref is not ours.
		return nil, nil
	}
	m, err := s.markOf(ctx, ref, r.GetObject().GetSHA())
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// markOf reads a state commit (once: commits never change).
func (s *Store) markOf(ctx context.Context, ref, sha string) (Mark, error) {
	if m, ok := s.known(sha); ok {
		return m, nil
	}
	c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, sha)
	if err != nil {
		return Mark{}, fmt.Errorf("refstate: read state commit %s of %s: %w", sha, ref, err)
	}
	status, holder, perr := parseMessage(c.GetMessage())
	if perr != nil {
		return Mark{}, &CorruptError{Ref: ref, Reason: perr.Error()}
	}
	m := Mark{Commit: sha, Status: status, Holder: holder, At: c.GetCommitter().GetDate().Time.UTC()}
	if len(c.Parents) > 0 {
		m.Parent = c.Parents[0].GetSHA()
	}
	s.remember(m)
	return m, nil
}

// Create puts ref at m if the ref does not exist. It returns the state the
// ref holds afterwards; created is true when that is m, including when an
// earlier attempt whose answer was lost created it. With a pusher and a
// ctx marked Together, it shares a push with the Creates made meanwhile.
func (s *Store) Create(ctx context.Context, ref string, m Mark) (cur Mark, created bool, err error) {
	if s.Push != nil {
		return s.pushCreate(ctx, ref, m)
	}
	_, _, err = s.Client.Git.CreateRef(ctx, s.Owner, s.Name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(m.Commit)}})
	if err == nil {
		return m, true, nil
	}
	if !isStatus(err, http.StatusUnprocessableEntity, "already exists") {
		// The answer may be lost while the ref was created: look once.
		if got, rerr := s.Read(ctx, ref); rerr == nil && got != nil && got.Commit == m.Commit {
			return m, true, nil
		}
		return Mark{}, false, fmt.Errorf("refstate: create %s: %w", ref, err)
	}
	got, err := s.Read(ctx, ref)
	if err != nil {
		return Mark{}, false, err
	}
	if got == nil {
		// Deleted between the two calls (swept): the caller tries again.
		return Mark{}, false, fmt.Errorf("refstate: create %s: it existed and then vanished; try again", ref)
	}
	return *got, got.Commit == m.Commit, nil
}

// push sends m's commit and up in one request; the error is the push's
// or the update's.
func (s *Store) push(ctx context.Context, m Mark, up refpush.Update) error {
	res, err := s.Push.Push(ctx, s.Owner+"/"+s.Name, pushed(m), []refpush.Update{up})
	if err != nil {
		return err
	}
	return res[0]
}

// readAfter reads ref after a push whose update was refused or whose
// answer was lost (else it returns nil: the failure says it all).
func (s *Store) readAfter(ctx context.Context, what, ref string, err error) (*Mark, error) {
	if !errors.Is(err, refpush.ErrRejected) && !refpush.MaybeApplied(err) {
		return nil, fmt.Errorf("refstate: %s %s: %w", what, ref, err)
	}
	got, rerr := s.Read(ctx, ref)
	if rerr != nil {
		return nil, errors.Join(fmt.Errorf("refstate: %s %s: %w", what, ref, err), rerr)
	}
	return got, nil
}

// pushCreate is Create as one push: a create refused means the ref
// exists; after a lost answer the ref holding m means the push landed.
func (s *Store) pushCreate(ctx context.Context, ref string, m Mark) (Mark, bool, error) {
	var err error
	if together(ctx) {
		err = s.pushTogether(ctx, ref, m)
	} else {
		err = s.push(ctx, m, refpush.Update{Ref: ref, New: m.Commit})
	}
	if err == nil {
		return m, true, nil
	}
	got, rerr := s.readAfter(ctx, "create", ref, err)
	switch {
	case rerr != nil:
		return Mark{}, false, rerr
	case got == nil && errors.Is(err, refpush.ErrRejected):
		// Refused, yet missing: deleted meanwhile (swept), or the server
		// refuses this ref; the caller tries again.
		return Mark{}, false, fmt.Errorf("refstate: create %s: refused, and the ref does not exist; try again: %w", ref, err)
	case got == nil:
		return Mark{}, false, fmt.Errorf("refstate: create %s: %w", ref, err)
	}
	return *got, got.Commit == m.Commit, nil
}

// pushAdvance is Advance as one push whose update is an exact
// compare-and-swap from m.Parent.
func (s *Store) pushAdvance(ctx context.Context, ref string, m Mark) (Mark, error) {
	err := s.push(ctx, m, refpush.Update{Ref: ref, Old: m.Parent, New: m.Commit})
	if err == nil {
		return m, nil
	}
	got, rerr := s.readAfter(ctx, "update", ref, err)
	switch {
	case rerr != nil:
		return Mark{}, rerr
	case got != nil && got.Commit == m.Commit:
		return m, nil // this push (or an earlier attempt) landed
	case !errors.Is(err, refpush.ErrRejected) && (got == nil && m.Parent == "" || got != nil && got.Commit == m.Parent):
		// the answer was lost and nothing moved: not applied
		return Mark{}, fmt.Errorf("refstate: update %s: %w", ref, err)
	case got == nil:
		return Mark{}, fmt.Errorf("refstate: update %s: the ref is gone: %w", ref, ErrLost)
	}
	return *got, fmt.Errorf("refstate: update %s to %s: it holds %s by %s: %w", ref, m.Status, got.Status, got.Holder, ErrLost)
}

// ErrLost means the ref moved away from the state a change was based on:
// another writer won.
var ErrLost = errors.New("refstate: the state changed under us")

// Advance moves ref from m.Parent to m (a compare-and-swap: the update is
// not forced, and m descends only from m.Parent; with a pusher, the ref
// must be at m.Parent exactly). It returns ErrLost, with
// the state the ref holds, when another writer moved it first. Repeating a
// successful Advance succeeds.
func (s *Store) Advance(ctx context.Context, ref string, m Mark) (Mark, error) {
	if s.Push != nil {
		return s.pushAdvance(ctx, ref, m)
	}
	// Repeating the update is safe: it is not forced, so a repeat only
	// moves the ref on to m (or finds it there); a 422 is read back below.
	_, _, err := s.Client.Git.UpdateRef(ghclient.Repeatable(ctx), s.Owner, s.Name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(m.Commit)}}, false)
	if err == nil {
		return m, nil
	}
	if !isStatus(err, http.StatusUnprocessableEntity, "") {
		// The answer may be lost while the ref moved: look once.
		if got, rerr := s.Read(ctx, ref); rerr == nil && got != nil && got.Commit == m.Commit {
			return m, nil
		}
		return Mark{}, fmt.Errorf("refstate: update %s: %w", ref, err)
	}
	got, rerr := s.Read(ctx, ref)
	switch {
	case rerr != nil:
		return Mark{}, errors.Join(fmt.Errorf("refstate: update %s: %w", ref, err), rerr)
	case got == nil:
		return Mark{}, fmt.Errorf("refstate: update %s: the ref is gone: %w", ref, ErrLost)
	case got.Commit == m.Commit:
		return m, nil // an earlier attempt landed
	}
	return *got, fmt.Errorf("refstate: update %s to %s: it holds %s by %s: %w", ref, m.Status, got.Status, got.Holder, ErrLost)
}

// Delete removes ref; a ref already gone is fine.
func (s *Store) Delete(ctx context.Context, ref string) error {
	_, err := s.Client.Git.DeleteRef(ctx, s.Owner, s.Name, strings.TrimPrefix(ref, "refs/"))
	if err != nil && !isStatus(err, http.StatusNotFound, "") && !isStatus(err, http.StatusUnprocessableEntity, "does not exist") {
		return fmt.Errorf("refstate: delete %s: %w", ref, err)
	}
	return nil
}

func isStatus(err error, code int, msg string) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == code &&
		strings.Contains(strings.ToLower(ge.Message), msg)
}

// sweepParallel bounds a sweep's concurrent requests.
const sweepParallel = 24

// SweepOptions bound one sweep.
type SweepOptions struct {
	Prefix string        // e.g. "refs/mention-runner/dispatched/"
	MaxAge time.Duration // state refs set longer ago are deleted (required)
	// Keep, when set, spares refs whose state it accepts (e.g. a claim
	// still in progress).
	Keep func(Mark) bool
	// MaxChecks bounds the commits read (one request each, cached ones
	// are free); 0 = 20. Refs are visited in random order, so successive
	// sweeps cover them all.
	MaxChecks int
	Rand      *rand.Rand // nil = randomly seeded
	// Along, when set (and only with Push), is given the refs the sweep
	// found expired and returns other refs to delete with them, in the
	// same push: each a delete from the commit its caller listed. Its
	// error is reported with the per-ref ones; the expired refs go anyway.
	Along func(ctx context.Context, expired []string) ([]refpush.Update, error)
	// Under, when set, narrows the sweep to the refs whose name under
	// Prefix starts with it (one slice of many: a listing of its own).
	Under string
	// Mark, when set (and only with Push), is a ref the sweep's push also
	// points at the hour's shared commit of its status (SetShared): a
	// marker saying the sweep ran, at no request of its own. A sweep that
	// deletes nothing sends no push and leaves it.
	Mark *SweepMark
}

// SweepMark is a marker ref a sweep sets (SweepOptions.Mark).
type SweepMark struct {
	Ref, Status string
	Old         string // the commit the caller read the ref at; "" = missing
}

// SweepResult says what a sweep did; per-ref errors are not fatal.
type SweepResult struct {
	Listed, Checked int
	Deleted         []string
	Along           []string // the refs deleted for SweepOptions.Along
	Errors          []error
	// MarkSent: the sweep's push carried SweepOptions.Mark (it may have
	// been set even if its answer was lost, or refused because another
	// writer set it first); Marked: it was set.
	MarkSent, Marked bool
}

// Sweep deletes state refs under o.Prefix whose state is older than
// o.MaxAge. Only a failure to list is returned as an error. With Push set
// it deletes them in one push (up to refpush.DefaultMaxUpdates refs a
// push), each only if the ref still holds the commit it was judged by;
// without, one request a ref.
func (s *Store) Sweep(ctx context.Context, o SweepOptions) (*SweepResult, error) {
	if o.MaxAge <= 0 || !strings.HasPrefix(o.Prefix, "refs/") || !strings.HasSuffix(o.Prefix, "/") || strings.Contains(o.Under, "/") {
		return nil, fmt.Errorf("refstate: sweep needs a refs/…/ prefix, a slice of it without a slash and a positive age (got %q, %q, %s)", o.Prefix, o.Under, o.MaxAge)
	}
	if o.MaxChecks <= 0 {
		o.MaxChecks = 20
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	refs, err := s.list(ctx, o.Prefix+o.Under)
	if err != nil {
		return nil, fmt.Errorf("refstate: sweep %s: %w", o.Prefix+o.Under, err)
	}
	res := &SweepResult{Listed: len(refs)}
	o.Rand.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	// Known states cost nothing; at most MaxChecks other commits are read,
	// each once however many refs point at it (claims share their grant's
	// and the hour's commits), all beside each other; the refs are then
	// deleted beside each other or together in one push. A sweep costs a
	// round trip to list, one to read and one to delete, not two per ref.
	var read []*github.Reference // a ref of each commit to read
	reading := map[string]bool{}
	var pick []*github.Reference
	for _, r := range refs {
		sha := r.GetObject().GetSHA()
		if _, cached := s.known(sha); !cached && !reading[sha] {
			if len(read) == o.MaxChecks {
				continue
			}
			reading[sha] = true
			read = append(read, r)
		}
		pick = append(pick, r)
	}
	res.Checked = len(read)
	unread := map[string]error{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(sweepParallel)
	for _, r := range read {
		g.Go(func() error {
			if _, err := s.markOf(gctx, r.GetRef(), r.GetObject().GetSHA()); err != nil {
				mu.Lock()
				unread[r.GetObject().GetSHA()] = err
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // every error is its commit's
	cutoff := s.now().Add(-o.MaxAge)
	expired := make([]refpush.Update, len(pick)) // for Push: the refs to delete at the commit judged
	deleted := make([]bool, len(pick))
	errs := make([]error, len(pick))
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(sweepParallel)
	for k, r := range pick {
		g.Go(func() error {
			if unread[r.GetObject().GetSHA()] != nil {
				return nil // its commit's error is reported once, below
			}
			m, err := s.markOf(gctx, r.GetRef(), r.GetObject().GetSHA())
			if err != nil {
				errs[k] = err
				return nil
			}
			if !m.At.Before(cutoff) || (o.Keep != nil && o.Keep(m)) {
				return nil
			}
			if s.Push != nil {
				expired[k] = refpush.Update{Ref: r.GetRef(), Old: r.GetObject().GetSHA()} // deleted together below
				return nil
			}
			if errs[k] = s.Delete(gctx, r.GetRef()); errs[k] == nil {
				deleted[k] = true
			}
			return nil
		})
	}
	_ = g.Wait() // every error is per ref
	if s.Push != nil {
		// A ref that moved since it was listed was judged by a state it
		// no longer holds: left.
		var problems []error
		n := len(expired)
		expired = append(expired, s.along(ctx, o, expired, &errs)...)
		rider := s.rider(o.Mark)
		var riderErr error
		deleted, riderErr, problems = s.Push.DeleteListedWith(ctx, s.Owner+"/"+s.Name, expired, rider)
		if rider != nil {
			res.MarkSent = !errors.Is(riderErr, refpush.ErrNotSent)
			res.Marked = riderErr == nil
		}
		for _, err := range problems {
			errs = append(errs, fmt.Errorf("refstate: sweep: %w", err))
		}
		for k, ok := range deleted[n:] {
			if ok {
				res.Along = append(res.Along, expired[n+k].Ref)
			}
		}
		deleted = deleted[:n]
	}
	for _, r := range read {
		if err := unread[r.GetObject().GetSHA()]; err != nil {
			res.Errors = append(res.Errors, err)
		}
	}
	for _, err := range errs {
		if err != nil {
			res.Errors = append(res.Errors, err)
		}
	}
	for k, r := range pick {
		if deleted[k] {
			res.Deleted = append(res.Deleted, r.GetRef())
		}
	}
	return res, nil
}

// rider is the update that sets mark in a sweep's push: nil when there is
// no mark, or it is at the hour's commit already.
func (s *Store) rider(mark *SweepMark) *refpush.Rider {
	if mark == nil {
		return nil
	}
	m := sharedMark(mark.Status, s.now())
	if mark.Old == m.Commit {
		return nil
	}
	return &refpush.Rider{Commits: pushed(m), Update: refpush.Update{Ref: mark.Ref, Old: mark.Old, New: m.Commit}}
}

// MarkShared points ref at the hour's shared commit of status (as
// SetShared) in one push, from old (the commit the caller read it at; ""
// = missing), sent once: for a marker whose only meaning is its date, a
// lost answer, or another writer's update first, is as good. Nothing is
// sent when the ref is at that commit already. It needs Push.
func (s *Store) MarkShared(ctx context.Context, ref, status, old string) error {
	if s.Push == nil {
		return fmt.Errorf("refstate: mark %s: needs a pusher", ref)
	}
	m := sharedMark(status, s.now())
	if old == m.Commit {
		return nil
	}
	if err := s.push(ghclient.SendOnce(ctx), m, refpush.Update{Ref: ref, Old: old, New: m.Commit}); err != nil {
		return fmt.Errorf("refstate: mark %s: %w", ref, err)
	}
	return nil
}

// ReadRecent is Read of a ref SetShared or MarkShared sets to status: a
// shared commit of the last within is known without reading it (its id is
// computed here), so such a ref costs one request; an older or other
// commit is read.
func (s *Store) ReadRecent(ctx context.Context, ref, status string, within time.Duration) (*Mark, error) {
	now := s.now()
	for at := now; !at.Before(now.Add(-within)); at = at.Add(-sharedPeriod) {
		s.remember(sharedMark(status, at))
	}
	return s.Read(ctx, ref)
}

// along asks o.Along for the refs to delete with the expired ones.
func (s *Store) along(ctx context.Context, o SweepOptions, expired []refpush.Update, errs *[]error) []refpush.Update {
	var refs []string
	for _, e := range expired {
		if e.Ref != "" {
			refs = append(refs, e.Ref)
		}
	}
	if o.Along == nil || len(refs) == 0 {
		return nil
	}
	more, err := o.Along(ctx, refs)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("refstate: sweep: %w", err))
	}
	return more
}

// list returns every ref under prefix (100 a request).
func (s *Store) list(ctx context.Context, prefix string) ([]*github.Reference, error) {
	var refs []*github.Reference
	opt := &github.ReferenceListOptions{Ref: strings.TrimPrefix(prefix, "refs/"), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := s.Client.Git.ListMatchingRefs(ctx, s.Owner, s.Name, opt)
		if err != nil {
			return nil, err
		}
		refs = append(refs, page...)
		if resp == nil || resp.NextPage == 0 {
			return refs, nil
		}
		opt.Page = resp.NextPage
	}
}

// List returns the refs under prefix ("refs/…/") and the commit each
// points at: one request per 100 refs, for a caller about to read many
// of them.
func (s *Store) List(ctx context.Context, prefix string) (map[string]string, error) {
	refs, err := s.list(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("refstate: list %s: %w", prefix, err)
	}
	out := make(map[string]string, len(refs))
	for _, r := range refs {
		out[r.GetRef()] = r.GetObject().GetSHA()
	}
	return out, nil
}

// MarkAt is the state of ref when it points at commit sha (as List
// found it): the commit is read once, and states sharing a commit cost
// one read together.
func (s *Store) MarkAt(ctx context.Context, ref, sha string) (Mark, error) {
	return s.markOf(ctx, ref, sha)
}
