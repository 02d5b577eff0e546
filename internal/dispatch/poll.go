package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/mention-runner/mention-runner/internal/clock"
	"github.com/mention-runner/mention-runner/internal/mention"
	"github.com/mention-runner/mention-runner/internal/threadctx"
	"github.com/mention-runner/mention-runner/internal/webhook"
)

// DefaultReadMargin looks this far before a thread's last_read_at, so a
// mention posted while the previous cycle was marking the thread read is not
// lost; what an earlier cycle handled is skipped by its dedupe ref.
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

	lastModified string
	interval     time.Duration
	swept        time.Time
	retry        []notification // marked read, but a mention in it failed
}

// sweepEvery is how often a long-running poller sweeps old claim refs; a
// fresh one (each `once` run) sweeps with a 1-in-10 chance, so a cron of
// `once` runs sweeps now and then without listing every ref each time.
const sweepEvery = time.Hour

func (p *Poller) sweepDue() bool {
	if p.swept.IsZero() {
		p.swept = p.D.cfg.Now()
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
	res, err := p.D.SweepClaims(ctx)
	if err != nil {
		p.D.cfg.Logger.Warn("sweep of old claim refs failed", "error", err.Error())
		return
	}
	if len(res.Deleted) > 0 || len(res.Errors) > 0 {
		p.D.cfg.Logger.Info("swept old claim refs", "deleted", len(res.Deleted), "listed", res.Listed, "errors", len(res.Errors))
	}
}

// CycleResult summarises one poll cycle.
type CycleResult struct {
	NotModified bool
	Threads     int
	Decisions   []Decision
	Failed      int // threads left unread to retry
}

// notification is the part of a notification thread we read; Repository
// stays raw so the context can reuse it.
type notification struct {
	ID         string          `json:"id"`
	Reason     string          `json:"reason"`
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

// Cycle polls once: list unread participating notifications (If-Modified-Since
// the last Last-Modified; a 304 costs no rate limit and ends the cycle), handle
// every mention in each mention thread, mark a thread read only when all its
// mentions were handled, then look at the thread once more (a mention posted
// before the mark but after the first look is in a thread now read, which
// no later listing shows), mark other threads read, then write the rate state.
func (p *Poller) Cycle(ctx context.Context) (CycleResult, error) {
	var res CycleResult
	list, lastMod, notMod, err := p.list(ctx)
	if err != nil {
		return res, err
	}
	list, kept := p.withRetries(list)
	if notMod && len(list) == 0 {
		res.NotModified = true
		return res, nil
	}
	p.D.Refresh()
	var errs []error
	for _, n := range list {
		res.Threads++
		decs, marked, err := p.thread(ctx, n)
		res.Decisions = append(res.Decisions, decs...)
		if err != nil {
			res.Failed++
			errs = append(errs, fmt.Errorf("thread %s (%s): %w", n.ID, n.Subject.URL, err))
			if marked || kept[n.ID] {
				// The thread is read: GitHub will not list it again for
				// this mention, so this process keeps it for its next cycles.
				p.retry = append(p.retry, n)
				p.D.cfg.Logger.Error("a mention posted while the thread was marked read failed; retried in the next cycles of this process", "thread", n.ID, "subject", n.Subject.URL, "error", err.Error())
			} else {
				p.D.cfg.Logger.Error("thread left unread for a retry", "thread", n.ID, "subject", n.Subject.URL, "error", err.Error())
			}
		}
	}
	if err := p.D.Flush(ctx); err != nil {
		errs = append(errs, err)
	}
	p.sweep(ctx)
	if len(errs) == 0 && !notMod {
		// Only a clean cycle may be skipped by the next 304: threads left
		// unread must be listed again.
		p.lastModified = lastMod
	}
	return res, errors.Join(errs...)
}

// onceRetryWaits are the waits before Once cycles again for threads it
// had to keep: a process that exits after its cycle has no later cycle.
var onceRetryWaits = []time.Duration{10 * time.Second, 30 * time.Second}

// Once is one cycle for a process that exits after it (`dispatcher once`).
// A thread that Cycle marked read but could not finish (a mention posted
// while it was being marked, whose dispatch failed) would be seen by no
// later run, so Once cycles again for it, after each of onceRetryWaits,
// until it is done. The result holds every decision; the error and Failed
// are the last cycle's.
func (p *Poller) Once(ctx context.Context) (CycleResult, error) {
	sleep := p.Sleep
	if sleep == nil {
		sleep = clock.Sleep
	}
	res, err := p.Cycle(ctx)
	for _, wait := range onceRetryWaits {
		if len(p.retry) == 0 {
			break
		}
		p.D.cfg.Logger.Info("retrying kept threads before exiting", "threads", len(p.retry), "after", wait.String())
		if serr := sleep(ctx, wait); serr != nil {
			return res, errors.Join(err, serr)
		}
		next, nerr := p.Cycle(ctx)
		res.Threads += next.Threads
		res.Decisions = append(res.Decisions, next.Decisions...)
		res.Failed, err = next.Failed, nerr
	}
	return res, err
}

// withRetries adds the threads an earlier cycle marked read but could not
// finish (see Cycle) to this cycle's list, once each; kept names those
// GitHub did not list again (read), which a failure must keep once more.
func (p *Poller) withRetries(list []notification) (_ []notification, kept map[string]bool) {
	pending := p.retry
	p.retry = nil
	kept = map[string]bool{}
	for _, r := range pending {
		if !slices.ContainsFunc(list, func(n notification) bool { return n.ID == r.ID }) {
			list = append(list, r)
			kept[r.ID] = true
		}
	}
	return list, kept
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

// list fetches every page of unread participating notifications.
func (p *Poller) list(ctx context.Context) (_ []notification, lastMod string, notMod bool, _ error) {
	var all []notification
	for page := 1; page > 0; {
		req, err := p.Client.NewRequest(http.MethodGet, fmt.Sprintf("notifications?participating=true&per_page=50&page=%d", page), nil)
		if err != nil {
			return nil, "", false, fmt.Errorf("build notifications request: %w", err)
		}
		if page == 1 && p.lastModified != "" {
			req.Header.Set("If-Modified-Since", p.lastModified)
		}
		var batch []notification
		resp, err := p.Client.Do(ctx, req, &batch)
		if resp != nil && page == 1 {
			if s, perr := strconv.Atoi(resp.Header.Get("X-Poll-Interval")); perr == nil && s > 0 {
				p.interval = time.Duration(s) * time.Second
			}
			if resp.StatusCode == http.StatusNotModified {
				return nil, "", true, nil
			}
		}
		if err != nil {
			return nil, "", false, fmt.Errorf("list notifications: %w", err)
		}
		if page == 1 {
			lastMod = resp.Header.Get("Last-Modified")
		}
		all = append(all, batch...)
		page = resp.NextPage
	}
	return all, lastMod, false, nil
}

func (p *Poller) markRead(ctx context.Context, id string) error {
	if _, err := p.Client.Activity.MarkThreadRead(ctx, id); err != nil {
		return fmt.Errorf("mark notification thread %s read: %w", id, err)
	}
	return nil
}

// thread handles every mention in one notification thread and marks it
// read; marked says whether it got that far (an error after it concerns a
// mention the second look found).
func (p *Poller) thread(ctx context.Context, n notification) (_ []Decision, marked bool, _ error) {
	if (n.Reason != "mention" && n.Reason != "team_mention") || (n.Subject.Type != "Issue" && n.Subject.Type != "PullRequest") {
		return nil, false, p.markRead(ctx, n.ID)
	}
	repo, number, err := subjectThread(n.Subject.URL)
	if err != nil {
		return nil, false, err
	}
	var head repoHead
	if err := json.Unmarshal(n.Repository, &head); err != nil || head.FullName == "" {
		return nil, false, fmt.Errorf("notification %s: repository object unreadable", n.ID)
	}
	th := mentionThread{n: n, repo: repo, number: number, isPR: n.Subject.Type == "PullRequest", head: head, seen: map[string]bool{}}
	decs, err := p.handleMentions(ctx, &th)
	if err != nil {
		return decs, false, err
	}
	if err := p.markRead(ctx, n.ID); err != nil {
		return decs, false, err
	}
	// Marking read covers every update so far, also a mention posted after
	// the look above: look again, now that any later one leaves the thread
	// unread. What the first look handled is skipped here by node id.
	more, err := p.handleMentions(ctx, &th)
	return append(decs, more...), true, err
}

// mentionThread is one notification thread being handled; seen holds the
// node ids of the mentions handled in this cycle.
type mentionThread struct {
	n      notification
	repo   string
	number int
	isPR   bool
	head   repoHead
	seen   map[string]bool
}

// handleMentions reads the thread and hands every mention not yet seen to
// the dispatcher.
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
	cands = slices.DeleteFunc(cands, func(c candidate) bool { return th.seen[c.NodeID] })
	if err := markEdited(ctx, p.D.gh, cands); err != nil {
		return nil, fmt.Errorf("%s#%d: %w", th.repo, th.number, err)
	}
	var decs []Decision
	var errs []error
	for _, c := range cands {
		th.seen[c.NodeID] = true
		t := &Trigger{Trigger: c.Trigger, Repository: th.n.Repository, pre: pre, recheck: c.recheck}
		t.Repo, t.Number, t.IsPR = th.repo, th.number, th.isPR
		t.RepoPrivate, t.RepoOwnerType = th.head.Private, th.head.Owner.Type
		dec, err := p.D.Handle(ctx, t)
		decs = append(decs, dec)
		if err != nil {
			errs = append(errs, err)
		}
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
