package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/mention-runner/mention-runner/internal/core/clock"
	"github.com/mention-runner/mention-runner/internal/core/mention"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

// DefaultReadMargin looks this far before a thread's last_read_at, so a
// mention stored before that time but not yet shown when the earlier cycle
// read the thread (GitHub's lists can lag) is still found; what an earlier
// cycle handled is skipped by its claim ref.
const DefaultReadMargin = 2 * time.Minute

// Poller reads the bot's notifications and hands every new mention to the
// dispatcher. One Poller is one process: it remembers Last-Modified.
type Poller struct {
	D *Dispatcher
	// Client reads notifications: a classic token of the bot account.
	Client *github.Client
	// MinInterval is the least wait between cycles in Run; GitHub's
	// X-Poll-Interval wins when longer.
	MinInterval time.Duration
	ReadMargin  time.Duration                                    // 0 = DefaultReadMargin
	Sleep       func(ctx context.Context, d time.Duration) error // nil = timer honouring ctx
	// Until ends Run cleanly before a wait that would pass it (zero = run
	// until ctx ends): a scheduled job polls for a while and stops between
	// cycles, never in the middle of one, so the next run can take over.
	Until time.Time
	Now   func() time.Time // nil = the dispatcher's clock
	// SweepFirst says whether a fresh poller sweeps in its first cycle;
	// nil = one in 10 at random (a cron of `once` runs sweeps now and
	// then).
	SweepFirst func() bool

	lastModified string
	interval     time.Duration
	swept        time.Time
	// unread is what this process did with the threads it left unread:
	// a thread listed again unchanged is not read again, and the mentions
	// it decided on are checked by their claim ref first instead of being
	// worked out anew.
	unread map[string]*handledThread
	mu     sync.Mutex // guards unread: threads are handled side by side
}

// sweepEvery is how often a long-running poller sweeps old claim refs; a
// fresh one (each `once` run) sweeps with a 1-in-10 chance, so a cron of
// `once` runs sweeps now and then without listing every ref each time.
const sweepEvery = time.Hour

func (p *Poller) sweepDue() bool {
	if p.swept.IsZero() {
		p.swept = p.D.cfg.Now()
		if p.SweepFirst != nil {
			return p.SweepFirst()
		}
		return rand.IntN(10) == 0
	}
	if p.D.cfg.Now().Sub(p.swept) < sweepEvery {
		return false
	}
	p.swept = p.D.cfg.Now()
	return true
}

// sweep deletes claim refs older than the configured age (best effort).
func (p *Poller) sweep(ctx context.Context) {
	if p.D.cfg.DryRun || !p.sweepDue() {
		return
	}
	p.D.logSweep(p.D.SweepClaims(ctx))
}

// logSweep logs what a claim sweep did.
func (d *Dispatcher) logSweep(res *refstate.SweepResult, err error) {
	if err != nil {
		d.cfg.Logger.Warn("sweep of old claim refs failed", "error", err.Error())
		return
	}
	if res == nil {
		return
	}
	if len(res.Deleted) > 0 || len(res.Errors) > 0 {
		d.cfg.Logger.Info("swept old claim refs", "deleted", len(res.Deleted), "job_states", len(res.Along), "listed", res.Listed, "marked", res.Marked, "errors", len(res.Errors))
	}
	for _, e := range res.Errors {
		d.cfg.Logger.Debug("sweep problem", "error", e.Error())
	}
}

// SweepEvery sweeps claim refs at once and then every interval (0 = an
// hour, as a poller does) until ctx ends, for a process that does not
// poll (serve); sleep waits (nil = a timer honouring ctx). A dry run
// does not sweep.
func (d *Dispatcher) SweepEvery(ctx context.Context, interval time.Duration, sleep func(context.Context, time.Duration) error) {
	if d.cfg.DryRun {
		return
	}
	if interval <= 0 {
		interval = sweepEvery
	}
	if sleep == nil {
		sleep = clock.Sleep
	}
	for ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
		d.logSweep(d.SweepClaims(sctx))
		cancel()
		if sleep(ctx, interval) != nil {
			return
		}
	}
}

// sweepTimeout bounds one sweep of SweepEvery.
const sweepTimeout = 5 * time.Minute

// EventSweepOneIn: one mention in this many that `dispatcher event` (a
// process per webhook event, which no poll cycle follows) handles also
// sweeps claims, unless the sweep marker says a dispatcher swept within
// the hour. While mentions come, claims and their job states are then
// swept about hourly, for the marker's read in one mention in ten.
const EventSweepOneIn = 10

// EventSweep sweeps claims after an event process handled jobID's
// mention, when the job's id draws it (one in EventSweepOneIn: a
// mention's cost repeats exactly) and no dispatcher swept within the
// hour. A dry run does not sweep.
func (d *Dispatcher) EventSweep(ctx context.Context, jobID string) {
	if jobID == "" || d.cfg.DryRun || !eventSweepDrawn(jobID) {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	d.logSweep(d.SweepClaimsUnlessSwept(sctx, sweepEvery))
}

func eventSweepDrawn(jobID string) bool {
	h := sha256.Sum256([]byte("mention-runner event sweep\x00" + jobID))
	return binary.BigEndian.Uint32(h[:4])%EventSweepOneIn == 0
}

// handledThread is what a process did with a thread it left unread.
type handledThread struct {
	updated time.Time       // the thread's update it handled completely (zero = none)
	decided map[string]bool // node ids of the mentions decided
}

// threadResult is what handling one listed thread gave.
type threadResult struct {
	skip bool
	decs []Decision
	err  error
}

// backlogThreads is the listing size above which claims are read before
// they are written; threadParallel bounds the threads handled at once.
const (
	backlogThreads = 10
	threadParallel = 8
)

// withCancel is group's context, ended also when parent ends: the group
// must not end every thread when one fails.
func withCancel(group, parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(group)
	context.AfterFunc(parent, cancel)
	return ctx
}

// lookup is what this process did with thread id, nil when nothing.
func (p *Poller) lookup(id string) *handledThread {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unread[id]
}

func (p *Poller) handled(id string) *handledThread {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unread == nil {
		p.unread = map[string]*handledThread{}
	}
	h := p.unread[id]
	if h == nil {
		h = &handledThread{decided: map[string]bool{}}
		p.unread[id] = h
	}
	return h
}

// CycleResult summarises one poll cycle.
type CycleResult struct {
	NotModified bool
	Threads     int
	Decisions   []Decision
	Failed      int // threads left unread to retry
	// Recent are threads handled but left unread because they were
	// updated too close to the listing (see markReadSlack): the next
	// cycle looks at them again, and what this one handled is skipped.
	Recent int
}

// notification is the part of a notification thread we read; Repository
// stays raw so the context can reuse it.
type notification struct {
	ID         string          `json:"id"`
	Reason     string          `json:"reason"`
	UpdatedAt  time.Time       `json:"updated_at"`
	LastReadAt *time.Time      `json:"last_read_at"`
	Repository json.RawMessage `json:"repository"`
	Subject    struct {
		URL  string `json:"url"`
		Type string `json:"type"`
	} `json:"subject"`
}

type repoHead struct {
	FullName string `json:"full_name"`
	Private  bool   `json:"private"`
	Owner    struct {
		Type string `json:"type"`
	} `json:"owner"`
}

// repo is the thread's repository (owner/name), "" when unreadable.
func (n notification) repo() string {
	var head repoHead
	if json.Unmarshal(n.Repository, &head) == nil && policy.ValidRepo(head.FullName) {
		return head.FullName
	}
	if r, _, err := subjectThread(n.Subject.URL); err == nil {
		return r
	}
	return ""
}

// markReadSlack is how much earlier than the listing a thread's last
// update must be for the cycle to mark it read. A repository's threads
// are marked read up to a time (PUT /repos/{owner}/{repo}/notifications
// with last_read_at; a thread's own PATCH marks everything up to the
// moment GitHub handles it, also a mention posted after we looked, which
// no later listing would show), in whole seconds, and GitHub's clocks
// (the Date header, the database's times) may differ a little: a thread
// updated within this of the listing stays unread and is looked at once
// more next cycle.
const markReadSlack = 2 * time.Second

// Cycle polls once: list unread participating notifications (If-Modified-Since
// the last Last-Modified; a 304 costs no rate limit and ends the cycle),
// handle every mention in each mention thread, then mark each repository's
// threads read up to a time before the listing, and before any thread of
// it whose handling failed, so that no thread holding a mention this
// cycle did not handle is marked read: one that failed, or was posted
// after it was looked at, stays unread for the next cycle (or the next
// `dispatcher once` run), whatever happens to this process meanwhile.
// Then write the rate state.
func (p *Poller) Cycle(ctx context.Context) (CycleResult, error) {
	var res CycleResult
	l, err := p.list(ctx)
	if err != nil {
		return res, err
	}
	if l.notModified {
		res.NotModified = true
		return res, nil
	}
	p.D.Refresh()
	// A backlog (a dispatcher that was down, or a listing that grew while
	// a cycle failed) is mostly mentions dispatched already: each claim
	// is read before it is written, a read GitHub does not count against
	// the account's write limits, not a refused write that it does.
	backlog := len(l.threads) > backlogThreads
	if backlog {
		if err := p.D.ListClaims(ctx); err != nil {
			// each claim is read on its own instead
			p.D.cfg.Logger.Warn("could not list the claims; reading each", "error", err.Error())
		}
		defer p.D.forgetClaims()
	}
	var errs []error
	failed := map[string]bool{} // thread ids
	out := make([]threadResult, len(l.threads))
	ctx, flushMarks := p.D.BatchMarks(ctx)
	// Threads are handled side by side, a few at a time: a backlog takes
	// minutes, not one round trip after another.
	g, gctx := errgroup.WithContext(context.WithoutCancel(ctx))
	g.SetLimit(threadParallel)
	for i, n := range l.threads {
		res.Threads++
		if h := p.lookup(n.ID); h != nil && h.updated.Equal(n.UpdatedAt) {
			// Handled, and unchanged since: left unread only because its
			// repository could not be marked up to it yet.
			out[i].skip = true
			continue
		}
		g.Go(func() error {
			out[i].decs, out[i].err = p.thread(withCancel(gctx, ctx), n, backlog)
			return nil
		})
	}
	_ = g.Wait() // every error is the thread's
	for i, n := range l.threads {
		if !out[i].skip && out[i].err != nil && ctx.Err() == nil {
			// Once more, alone: a thread that failed beside the others
			// (a timeout, a 5xx) does not keep its repository's other
			// threads unread until the next run.
			out[i].decs, out[i].err = p.thread(ctx, n, backlog)
		}
	}
	unmarked := flushMarks(ctx)
	for i, n := range l.threads {
		if out[i].skip {
			continue
		}
		for _, dec := range out[i].decs {
			if merr := unmarked[dec.JobID]; merr != nil && out[i].err == nil {
				out[i].err = fmt.Errorf("mark mention %s dispatched: %w", dec.JobID, merr)
			}
		}
		decs, err := out[i].decs, out[i].err
		res.Decisions = append(res.Decisions, decs...)
		if err == nil && !n.UpdatedAt.Truncate(time.Second).After(l.horizon) {
			// Only an update older than the horizon: any later one shows
			// as another time (GitHub's times are whole seconds).
			p.handled(n.ID).updated = n.UpdatedAt
		}
		if err != nil {
			res.Failed++
			failed[n.ID] = true
			errs = append(errs, fmt.Errorf("thread %s (%s): %w", n.ID, n.Subject.URL, err))
			p.D.cfg.Logger.Error("thread left unread for a retry", "thread", n.ID, "subject", n.Subject.URL, "error", err.Error())
		}
	}
	recent, err := p.markRead(ctx, l, failed)
	res.Recent = recent
	if err != nil {
		errs = append(errs, err)
	}
	if err := p.D.Flush(ctx); err != nil {
		errs = append(errs, err)
	}
	p.sweep(ctx)
	if len(errs) == 0 && recent == 0 {
		// Only a cycle that left nothing unread may be skipped by the
		// next 304: threads left unread must be listed again.
		p.lastModified = l.lastModified
	}
	return res, errors.Join(errs...)
}

// markRead marks each repository's threads read: up to the listing's
// horizon, and to before the oldest update of a thread of it that failed.
// It returns how many handled threads stay unread because they were
// updated after that time.
func (p *Poller) markRead(ctx context.Context, l listing, failed map[string]bool) (recent int, _ error) {
	upTo := map[string]time.Time{}
	byRepo := map[string][]notification{}
	var repos []string
	for _, n := range l.threads {
		repo := n.repo()
		if repo == "" {
			continue // its handling failed: it names no repository to mark
		}
		t, seen := upTo[repo]
		if !seen {
			repos = append(repos, repo)
			t = l.horizon
		}
		if before := n.UpdatedAt.Truncate(time.Second).Add(-time.Second); failed[n.ID] && before.Before(t) {
			t = before
		}
		upTo[repo] = t
		byRepo[repo] = append(byRepo[repo], n)
	}
	var errs []error
	for _, repo := range repos {
		var marked []string
		for _, n := range byRepo[repo] {
			switch {
			case failed[n.ID]:
			case !n.UpdatedAt.Truncate(time.Second).After(upTo[repo]):
				marked = append(marked, n.ID)
			default:
				recent++
			}
		}
		if len(marked) == 0 {
			continue
		}
		owner, name, _ := strings.Cut(repo, "/")
		if _, err := p.Client.Activity.MarkRepositoryNotificationsRead(ctx, owner, name, github.Timestamp{Time: upTo[repo]}); err != nil {
			errs = append(errs, fmt.Errorf("mark %s's notifications read up to %s: %w", repo, upTo[repo].Format(time.RFC3339), err))
			continue
		}
		for _, id := range marked {
			delete(p.unread, id)
		}
	}
	return recent, errors.Join(errs...)
}

// Once is one cycle for a process that exits after it (`dispatcher once`):
// a thread it could not finish stays unread, so the next run finds it.
func (p *Poller) Once(ctx context.Context) (CycleResult, error) {
	return p.Cycle(ctx)
}

// Run polls until ctx ends (or Until comes), waiting at least MinInterval
// and X-Poll-Interval between cycles. A failed cycle is logged and retried
// next time.
func (p *Poller) Run(ctx context.Context) error {
	sleep := p.Sleep
	if sleep == nil {
		sleep = clock.Sleep
	}
	now := p.Now
	if now == nil {
		now = p.D.cfg.Now
	}
	for {
		res, err := p.Cycle(ctx)
		log := p.D.cfg.Logger
		if err != nil {
			log.Error("poll cycle failed", "error", err.Error(), "threads", res.Threads, "failed", res.Failed)
		} else {
			log.Info("poll cycle", "not_modified", res.NotModified, "threads", res.Threads, "decisions", len(res.Decisions))
		}
		wait := max(p.MinInterval, p.interval)
		if !p.Until.IsZero() && now().Add(wait).After(p.Until) {
			log.Info("poll window over", "until", p.Until.UTC().Format(time.RFC3339))
			return nil
		}
		if err := sleep(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// listing is one cycle's unread notifications.
type listing struct {
	threads      []notification
	lastModified string
	notModified  bool
	// horizon is the latest time up to which a thread may be marked read:
	// every update GitHub had not stored when it answered the first page
	// is later (see markReadSlack).
	horizon time.Time
}

// list fetches every page of unread participating notifications.
func (p *Poller) list(ctx context.Context) (listing, error) {
	var l listing
	for page := 1; page > 0; {
		req, err := p.Client.NewRequest(http.MethodGet, fmt.Sprintf("notifications?participating=true&per_page=50&page=%d", page), nil)
		if err != nil {
			return l, fmt.Errorf("build notifications request: %w", err)
		}
		if page == 1 && p.lastModified != "" {
			req.Header.Set("If-Modified-Since", p.lastModified)
		}
		var batch []notification
		sent := time.Now()
		resp, err := p.Client.Do(ctx, req, &batch)
		if resp != nil && page == 1 {
			if s, perr := strconv.Atoi(resp.Header.Get("X-Poll-Interval")); perr == nil && s > 0 {
				p.interval = time.Duration(s) * time.Second
			}
			if resp.StatusCode == http.StatusNotModified {
				l.notModified = true
				return l, nil
			}
		}
		if err != nil {
			return l, fmt.Errorf("list notifications: %w", err)
		}
		if page == 1 {
			l.lastModified = resp.Header.Get("Last-Modified")
			// GitHub's clock when it answered, less the time the answer
			// took (the listing was read before), in whole seconds.
			date, derr := http.ParseTime(resp.Header.Get("Date"))
			if derr != nil {
				return l, fmt.Errorf("list notifications: the answer's Date header %q is not a date, so no thread can be marked read safely (a proxy in between?): %w", resp.Header.Get("Date"), derr)
			}
			l.horizon = date.Add(-time.Since(sent)).Truncate(time.Second).Add(-markReadSlack).UTC()
		}
		l.threads = append(l.threads, batch...)
		page = resp.NextPage
	}
	return l, nil
}

// thread handles every mention in one notification thread; Cycle marks
// it read afterwards.
func (p *Poller) thread(ctx context.Context, n notification, backlog bool) ([]Decision, error) {
	if (n.Reason != "mention" && n.Reason != "team_mention") || (n.Subject.Type != "Issue" && n.Subject.Type != "PullRequest") {
		return nil, nil
	}
	repo, number, err := subjectThread(n.Subject.URL)
	if err != nil {
		return nil, err
	}
	var head repoHead
	if err := json.Unmarshal(n.Repository, &head); err != nil || head.FullName == "" {
		return nil, fmt.Errorf("notification %s: repository object unreadable", n.ID)
	}
	th := mentionThread{n: n, repo: repo, number: number, isPR: n.Subject.Type == "PullRequest", head: head, backlog: backlog}
	return p.handleMentions(ctx, &th)
}

// mentionThread is one notification thread being handled.
type mentionThread struct {
	n      notification
	repo   string
	number int
	isPR   bool
	head   repoHead
	// backlog: read each claim before writing it (see Cycle)
	backlog bool
}

// handleMentions reads the thread and hands every mention to the
// dispatcher.
func (p *Poller) handleMentions(ctx context.Context, th *mentionThread) ([]Decision, error) {
	pre, err := p.prefetch(ctx, th.repo, th.number, th.isPR)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if th.n.LastReadAt != nil {
		since = *th.n.LastReadAt
	}
	margin := p.ReadMargin
	if margin <= 0 {
		margin = DefaultReadMargin
	}
	cands, err := candidates(pre, th.isPR, p.D.cfg.Bot, since, margin)
	if err != nil {
		return nil, fmt.Errorf("%s#%d: %w", th.repo, th.number, err)
	}
	h := p.handled(th.n.ID)
	for i := range cands {
		cands[i].recheck = cands[i].recheck || th.backlog || h.decided[cands[i].NodeID]
	}
	if err := markEdited(ctx, p.D.gh, cands); err != nil {
		return nil, fmt.Errorf("%s#%d: %w", th.repo, th.number, err)
	}
	var decs []Decision
	var errs []error
	for _, c := range cands {
		t := &Trigger{Trigger: c.Trigger, Repository: th.n.Repository, pre: pre, recheck: c.recheck}
		t.Repo, t.Number, t.IsPR = th.repo, th.number, th.isPR
		t.RepoPrivate, t.RepoOwnerType = th.head.Private, th.head.Owner.Type
		dec, err := p.D.Handle(ctx, t)
		decs = append(decs, dec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.decided[c.NodeID] = true
	}
	return decs, errors.Join(errs...)
}

// prefetch lists the thread once, every list and object at the same time;
// the lists serve both to find mentions and as the context.
func (p *Poller) prefetch(ctx context.Context, repo string, number int, isPR bool) (prefetched, error) {
	var pre prefetched
	c := p.D.gh
	base := fmt.Sprintf("repos/%s", repo)
	g, gctx := errgroup.WithContext(ctx)
	obj := func(dst *json.RawMessage, path string) {
		g.Go(func() (err error) { *dst, err = threadctx.GetObject(gctx, c, path); return err })
	}
	list := func(dst *[]json.RawMessage, path string) {
		g.Go(func() (err error) { *dst, err = threadctx.GetAll(gctx, c, path); return err })
	}
	obj(&pre.issue, fmt.Sprintf("%s/issues/%d", base, number))
	list(&pre.comments, fmt.Sprintf("%s/issues/%d/comments", base, number))
	if isPR {
		obj(&pre.pull, fmt.Sprintf("%s/pulls/%d", base, number))
		list(&pre.reviews, fmt.Sprintf("%s/pulls/%d/reviews", base, number))
		list(&pre.reviewComnts, fmt.Sprintf("%s/pulls/%d/comments", base, number))
	}
	return pre, g.Wait()
}

type candidate struct {
	webhook.Trigger
	recheck bool
}

// apiItem is what a candidate needs of an issue, PR, comment or review.
type apiItem struct {
	ID          int64      `json:"id"`
	NodeID      string     `json:"node_id"`
	Body        *string    `json:"body"`
	HTMLURL     string     `json:"html_url"`
	CreatedAt   *time.Time `json:"created_at"`
	SubmittedAt *time.Time `json:"submitted_at"`
	User        *struct {
		Login string `json:"login"`
		Type  string `json:"type"`
		ID    int64  `json:"id"`
	} `json:"user"`
}

// candidates are the thread's items created at or after since-margin that
// mention the bot, oldest first. Edited old comments never qualify: only
// the creation time counts. Recent ones are then marked Edited by
// markEdited, so their decision says "ignored: edited" (an allowed user's
// comment edited by someone else to add a mention must not run as that
// user's request).
func candidates(pre prefetched, isPR bool, bot string, since time.Time, margin time.Duration) ([]candidate, error) {
	from := since.Add(-margin)
	var out []candidate
	add := func(raw json.RawMessage, event string, withID bool) error {
		var it apiItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return fmt.Errorf("%s object unreadable: %w", event, err)
		}
		at := it.CreatedAt
		if at == nil {
			at = it.SubmittedAt
		}
		if at == nil || it.User == nil || it.Body == nil || it.NodeID == "" {
			return nil // nothing that can carry a mention (a review without a body)
		}
		if !since.IsZero() && at.Before(from) {
			return nil
		}
		if len(mention.Find(*it.Body, bot)) == 0 {
			return nil
		}
		c := candidate{Trigger: webhook.Trigger{Event: event, NodeID: it.NodeID, Author: it.User.Login, AuthorType: it.User.Type, AuthorID: it.User.ID,
			Body: *it.Body, URL: it.HTMLURL, CreatedAt: at.UTC()},
			recheck: !since.IsZero() && at.Before(since)}
		if withID {
			c.CommentID = it.ID
		}
		out = append(out, c)
		return nil
	}
	var errs []error
	if isPR {
		errs = append(errs, add(pre.pull, "pull_request", false))
		for _, r := range pre.reviews {
			errs = append(errs, add(r, "pull_request_review", true))
		}
		for _, r := range pre.reviewComnts {
			errs = append(errs, add(r, "pull_request_review_comment", true))
		}
	} else {
		errs = append(errs, add(pre.issue, "issues", false))
	}
	for _, r := range pre.comments {
		errs = append(errs, add(r, "issue_comment", true))
	}
	sortByTime(out)
	return out, errors.Join(errs...)
}

// markEdited asks GitHub whether each candidate's body was ever edited
// (GraphQL lastEditedAt; see lastEdited). REST cannot answer it: a review
// has no updated_at, and an issue's or comment's updated_at also moves for
// labels, reactions, new comments or a state change. A candidate GitHub
// does not answer for is treated as edited: it cannot be vouched for.
func markEdited(ctx context.Context, c *github.Client, cands []candidate) error {
	if len(cands) == 0 {
		return nil
	}
	ids := make([]string, len(cands))
	for i, cd := range cands {
		ids[i] = cd.NodeID
	}
	edited, err := lastEdited(ctx, c, ids)
	if err != nil {
		return err
	}
	for i := range cands {
		e, known := edited[cands[i].NodeID]
		cands[i].Edited = e || !known
	}
	return nil
}

func sortByTime(cs []candidate) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].CreatedAt.Before(cs[j].CreatedAt) })
}

// subjectThread reads owner/name and number from a subject API URL
// (".../repos/{owner}/{repo}/issues/{n}" or ".../pulls/{n}").
func subjectThread(u string) (string, int, error) {
	i := strings.LastIndex(u, "/repos/")
	if i < 0 {
		return "", 0, fmt.Errorf("notification subject URL %q is not a repository URL", u)
	}
	parts := strings.Split(u[i+len("/repos/"):], "/")
	if len(parts) != 4 || (parts[2] != "issues" && parts[2] != "pulls") {
		return "", 0, fmt.Errorf("notification subject URL %q is not an issue or pull request", u)
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return "", 0, fmt.Errorf("notification subject URL %q has no issue number", u)
	}
	return parts[0] + "/" + parts[1], n, nil
}
