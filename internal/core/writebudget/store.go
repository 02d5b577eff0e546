package writebudget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
)

// head is where the ledger was read: the highest generation present.
type head struct {
	gen    int    // its generation (0 is contract.PaceRef)
	sha    string // its commit; "" when the account has no ledger yet
	closed bool   // its state is Closed: the next write opens next
	next   int    // the generation a Closed state names (0: gen+1)
	stale  []int  // lower generations a rotation left behind
	// listed: found by listing the generations, so stale is known (not
	// when read at the name the clock gives, named.go, or guessed,
	// optimistic.go)
	listed bool
}

// maxCache bounds the parsed commits kept (a long-running dispatcher
// reads thousands of ledger commits a day; only the latest are asked again).
const maxCache = 64

// read returns the ledger and where it is: in one request at the name
// the clock gives when it is there (named.go), else from the listing.
func (l *Ledger) read(ctx context.Context) (state, head, error) {
	s, h, tried, found, ok := l.readNamed(ctx)
	if ok {
		l.saw(s)
		return s, h, nil
	}
	var err error
	if tried > 1 && !found {
		// the hour's name is not there (yet): see listBesideHourBefore
		h, err = l.listBesideHourBefore(ctx, tried)
	} else {
		h, err = l.find(ctx)
	}
	if err != nil || h.sha == "" {
		return state{}, h, err
	}
	if s, h, err = l.readAt(ctx, h); err != nil {
		return state{}, head{}, err
	}
	l.missedNamed(tried, s, h)
	l.saw(s)
	return s, h, nil
}

// readAt reads the state of the generation found at h.
func (l *Ledger) readAt(ctx context.Context, h head) (state, head, error) {
	ref := contract.PaceGenRef(l.o.Account, h.gen)
	s, ok := l.cache[h.sha]
	if !ok {
		c, _, err := l.o.Client.Git.GetCommit(ctx, l.owner, l.name, h.sha)
		if err != nil {
			return state{}, head{}, fmt.Errorf("writebudget: read the ledger commit %s: %w", h.sha, err)
		}
		if s, err = parse(c.GetMessage()); err != nil {
			return state{}, head{}, fmt.Errorf("writebudget: %s does not hold a write budget (%v): delete the ref and it starts afresh", ref, err)
		}
		l.remember(h.sha, s)
	}
	h.closed, h.next = s.Closed, 0
	if s.Closed {
		h.next = s.Next
	}
	return s, h, nil
}

// find lists every generation of the account's ledger in one request:
// the highest is the ledger.
func (l *Ledger) find(ctx context.Context) (head, error) {
	prefix := contract.PaceRef(l.o.Account)
	opt := &github.ReferenceListOptions{Ref: strings.TrimPrefix(prefix, "refs/"), ListOptions: github.ListOptions{PerPage: 100}}
	h, shas := head{gen: -1}, map[int]string{}
	for {
		refs, resp, err := l.o.Client.Git.ListMatchingRefs(ctx, l.owner, l.name, opt)
		if err != nil {
			return head{}, fmt.Errorf("writebudget: read %s: %w", prefix, err)
		}
		for _, r := range refs {
			if gen, ok := contract.PaceGen(l.o.Account, r.GetRef()); ok {
				shas[gen] = r.GetObject().GetSHA()
				h.gen = max(h.gen, gen)
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if h.gen < 0 {
		return head{listed: true}, nil
	}
	h.listed = true
	for gen := range shas {
		if gen != h.gen {
			h.stale = append(h.stale, gen)
		}
	}
	sort.Ints(h.stale)
	h.sha = shas[h.gen]
	return h, nil
}

func (l *Ledger) remember(sha string, s state) {
	if len(l.cache) >= maxCache {
		clear(l.cache)
	}
	l.cache[sha] = s
}

func parse(msg string) (state, error) {
	body, ok := strings.CutPrefix(msg, messagePrefix)
	if !ok {
		return state{}, errors.New("not a ledger commit")
	}
	var s state
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return state{}, err
	}
	if !sort.SliceIsSorted(s.Grants, func(i, j int) bool { return s.Grants[i].At < s.Grants[j].At }) {
		return state{}, errors.New("grants out of order")
	}
	if s.Closed && s.Next != 0 {
		s.Pause, s.PauseCarried = s.PauseCarried, 0 // the pause its writer fenced (named.go)
	}
	return s, nil
}

// write records next where h was read, without force: on top of h's
// commit, or, when there is no ledger yet or h is closed, as the root of
// the next generation, whose ref is created (which fails when it exists).
// refstate.ErrLost when another process moved or created it first.
func (l *Ledger) write(ctx context.Context, h head, next state) error {
	gen, parent := h.gen, h.sha
	if h.sha == "" || h.closed {
		gen, parent = h.gen+1, ""
		if h.closed && h.next > h.gen {
			gen = h.next
		}
		next.Seq, next.Since = 0, l.o.Now().UnixMilli()
	} else {
		next.Seq++
	}
	if !next.Closed {
		next.Next = 0
	}
	if !l.o.Sequential {
		next.Gen = gen
	}
	body, err := json.Marshal(l.wire(next))
	if err != nil {
		return fmt.Errorf("writebudget: encode: %w", err)
	}
	// dated by this process's clock, as refstate's commits are: a grant's
	// commit is also its dispatcher's claim commit, whose date is the claim's
	at := l.o.Now().UTC().Truncate(time.Second)
	c := refpush.Commit{Tree: refstate.EmptyTree, Message: messagePrefix + string(body),
		Sig: refpush.Signature{Name: commitName, Email: commitEmail, At: at}}
	if parent != "" {
		c.Parents = []string{parent}
	}
	name := contract.PaceGenRef(l.o.Account, gen)
	var sha string
	p := l.pusher()
	if p != nil {
		sha, err = l.push(ctx, p, gen, name, parent, c, next)
	} else {
		sha, err = l.post(ctx, gen, name, parent, c, next)
	}
	// top: the ref written is known to be the ledger (the highest
	// generation) right after the write, so the next grant may be
	// committed on it unread (optimistic.go). An update moved the ref
	// read as the ledger (or guessed, itself known to be the ledger), and
	// a generation is rotated past only after its ref is moved to a
	// closed state, which refuses a later update on our commit.
	top := parent != "" && !errors.Is(err, errMovedOn)
	if errors.Is(err, errMovedOn) {
		err = nil
	}
	if err == nil && parent == "" {
		// A process that read an old generation closed can create the
		// next one after it was rotated past and deleted: a dead
		// generation, below the ledger, that nobody reads. Its grant is
		// no grant; take it again. (A generation is deleted only once a
		// higher one exists, so the ledger is never the one re-created.)
		// A generation opened just now and rotated past at once carried
		// the grant on: that is no loss, but the ref written may be such
		// a dead one (a lost answer's create), which nothing would ever
		// refuse to move: never committed on unread.
		now, ferr := l.find(ctx)
		if ferr == nil && now.gen > gen && !l.carried(ctx, now, next) {
			l.mu.Lock()
			l.dead++
			l.mu.Unlock()
			return fmt.Errorf("writebudget: %s was re-created below %s: %w", name, contract.PaceGenRef(l.o.Account, now.gen), refstate.ErrLost)
		}
		top = ferr == nil && now.gen == gen && now.sha == sha
	}
	if err != nil {
		return err
	}
	l.remember(sha, next)
	l.saw(next)
	l.wrote = Grant{Commit: sha, At: at, Holder: next.Holder}
	l.mine = head{}
	if top {
		l.mine = head{gen: gen, sha: sha, closed: next.Closed, next: next.Next}
	}
	if l.announce && p != nil {
		// the commit exists only now (pushed with its ref): announced
		// before, a write pointing at it could not be made
		l.announceLocked(l.wrote)
	}
	return nil
}

// The ledger commit's author and committer.
const (
	commitName  = "mention-runner"
	commitEmail = "mention-runner@users.noreply.github.com"
)

// errMovedOn: an update whose answer was lost was stored, and another
// process has moved the ledger on since (it holds what the update
// added). Not an error: the ref is just not known to be at our commit.
var errMovedOn = errors.New("writebudget: stored, and moved on since")

// post writes c and its ref with the REST API: the commit, then the ref
// update or creation (two writes). It returns c's id as GitHub made it.
func (l *Ledger) post(ctx context.Context, gen int, name, parent string, c refpush.Commit, next state) (string, error) {
	gh := l.client()
	sig := github.CommitAuthor{Name: github.String(c.Sig.Name), Email: github.String(c.Sig.Email), Date: &github.Timestamp{Time: c.Sig.At}}
	rc := &github.Commit{Message: github.String(c.Message), Tree: &github.Tree{SHA: github.String(c.Tree)}, Author: &sig, Committer: &sig}
	if parent != "" {
		rc.Parents = []*github.Commit{{SHA: github.String(parent)}}
	}
	got, _, err := gh.Git.CreateCommit(ctx, l.owner, l.name, rc, nil)
	if err != nil {
		return "", fmt.Errorf("writebudget: commit the ledger: %w", err)
	}
	sha := got.GetSHA()
	if l.announce {
		l.announceLocked(Grant{Commit: sha, At: c.Sig.At, Holder: next.Holder})
	}
	ref := &github.Reference{Ref: github.String(name), Object: &github.GitObject{SHA: github.String(sha)}}
	if parent == "" {
		// sent once: a create repeated after its answer was lost can
		// re-create the generation after it was rotated past and deleted,
		// at the same commit, where a process still holding that commit
		// could then commit a grant nobody reads
		_, _, err = gh.Git.CreateRef(ghclient.SendOnce(ctx), l.owner, l.name, ref)
		if err != nil && ambiguous(err) {
			err = l.stored(ctx, gen, sha, next, err)
		}
	} else {
		_, _, err = gh.Git.UpdateRef(ctx, l.owner, l.name, ref, false)
	}
	switch {
	case err == nil:
		return sha, nil
	case errors.Is(err, refstate.ErrLost):
		return "", err
	case unprocessable(err):
		// created meanwhile, moved on, or deleted by a rotation: a lost
		// answer of our own update reads as moved too and costs one more round
		return "", fmt.Errorf("writebudget: update %s: %w", name, refstate.ErrLost)
	}
	return "", fmt.Errorf("writebudget: update %s: %w", name, err)
}

// push writes c and its ref in one request (refpush): the update names
// the ref's value now (parent, or none for a generation's creation), so
// it is the compare-and-swap. Sent once: a repeat after a lost answer
// would be refused as moved (our own commit there) or could re-create a
// generation rotated past meanwhile; instead the ledger is read.
func (l *Ledger) push(ctx context.Context, p *refpush.Client, gen int, name, parent string, c refpush.Commit, next state) (string, error) {
	sha := c.SHA()
	res, err := p.Push(ghclient.SendOnce(ctx), l.o.Repo, []refpush.Commit{c}, []refpush.Update{{Ref: name, Old: parent, New: sha}})
	if err == nil {
		err = res[0]
	}
	var rl *ghclient.RateLimitError
	switch {
	case err == nil:
		return sha, nil
	case errors.Is(err, refpush.ErrRejected):
		// created meanwhile, moved on, or deleted by a rotation
		return "", fmt.Errorf("writebudget: update %s: %w", name, refstate.ErrLost)
	case !refpush.MaybeApplied(err) || errors.As(err, &rl):
		return "", fmt.Errorf("writebudget: update %s: %w", name, err)
	}
	if parent == "" {
		if err := l.stored(ctx, gen, sha, next, err); err != nil {
			return "", err
		}
		return sha, nil
	}
	return sha, l.updated(ctx, gen, name, sha, next, err)
}

// updated finds out whether a pushed update whose answer was lost
// (sendErr) was stored: the ref at sha, or moved on since with what next
// added carried on (errMovedOn). Not stored: refstate.ErrLost.
func (l *Ledger) updated(ctx context.Context, gen int, name, sha string, next state, sendErr error) error {
	r, _, err := l.o.Client.Git.GetRef(ctx, l.owner, l.name, strings.TrimPrefix(name, "refs/"))
	if err == nil && r.GetObject().GetSHA() == sha {
		return nil
	}
	if err == nil && l.carried(ctx, head{gen: gen, sha: r.GetObject().GetSHA()}, next) {
		return errMovedOn
	}
	if err != nil && !isStatus(err, http.StatusNotFound) {
		return fmt.Errorf("writebudget: update %s: %v; reading it back: %w", name, sendErr, err)
	}
	// moved by another process, or rotated past and deleted (a closing
	// update that was stored has its grant carried on: that reads as lost
	// and is taken again, which only slows the account)
	return fmt.Errorf("writebudget: update %s: %v: %w", name, sendErr, refstate.ErrLost)
}

func isStatus(err error, status int) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == status
}

// ambiguous: the request may have been stored (no answer, a 5xx, a page
// that is not GitHub's API), unlike a 4xx or a rate limit's refusal.
func ambiguous(err error) bool {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode < 500 {
		return false
	}
	var rl *ghclient.RateLimitError
	return !errors.As(err, &rl)
}

func unprocessable(err error) bool { return isStatus(err, http.StatusUnprocessableEntity) }

// stored finds out whether a generation's creation whose answer was lost
// (sendErr) was stored: the generation at sha, or carried on into a
// later one. Not stored: refstate.ErrLost (the caller reads again).
func (l *Ledger) stored(ctx context.Context, gen int, sha string, next state, sendErr error) error {
	now, err := l.find(ctx)
	switch {
	case err != nil:
		return sendErr
	case now.gen == gen && now.sha == sha:
		return nil
	case now.gen > gen && l.carried(ctx, now, next):
		return nil
	}
	return fmt.Errorf("writebudget: %v: %w", sendErr, errNotStored)
}

// errNotStored: a generation's creation whose answer was lost is not
// found stored. A refstate.ErrLost (read again), but unlike the others it
// does not say that generation or a later one exists: the closed one
// before it may be the ledger still and is not deleted (rotate.go, open).
var errNotStored = fmt.Errorf("the generation was not created: %w", refstate.ErrLost)

// client writes the ledger: Options.Client, or its fallback for a while
// after Client failed.
func (l *Ledger) client() *github.Client {
	if l.fallingBack() {
		return l.o.Fallback
	}
	return l.o.Client
}

// pusher pushes the ledger's updates for client(): nil when they are
// written with the REST API.
func (l *Ledger) pusher() *refpush.Client {
	if l.fallingBack() {
		return l.o.FallbackPush
	}
	return l.o.Push
}

func (l *Ledger) fallingBack() bool { return l.o.Fallback != nil && l.o.Now().Before(l.fallback) }

// selfCost is what one ledger update costs the account with the client
// used at now.
func (l *Ledger) selfCost(now time.Time) int {
	cost, push := l.o.SelfCost, l.o.Push
	if l.o.Fallback != nil && now.Before(l.fallback) {
		cost, push = l.o.FallbackCost, l.o.FallbackPush
	}
	if cost > 0 && push.Refused() {
		return UpdateCost(nil) // pushes refused: the REST API's commit and ref update
	}
	return cost
}

// carried says whether the ledger at h holds what next added: this
// handle's newest grant, the pause and the limits. Unsure (unreadable) counts as no:
// the grant is then taken again. Taking it twice only slows the account;
// using a grant only a dead generation holds could exceed its limits.
func (l *Ledger) carried(ctx context.Context, h head, next state) bool {
	s, _, err := l.readAt(ctx, h)
	if err != nil {
		return false
	}
	if s.Pause < next.Pause || s.PerMinute != next.PerMinute || s.PerHour != next.PerHour {
		return false
	}
	// this handle's grants at the newest one's moment (two grants can
	// share a millisecond): all of them there?
	var newest int64 = -1
	for _, g := range next.Grants {
		if g.By == l.id {
			newest = g.At
		}
	}
	count := func(gs []grant) (n int) {
		for _, g := range gs {
			if g.By == l.id && g.At == newest {
				n++
			}
		}
		return n
	}
	return newest < 0 || count(s.Grants) >= count(next.Grants)
}
