package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/identity"
	"github.com/mention-runner/mention-runner/internal/core/mention"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// Clients are the GitHub clients the dispatcher uses; build them with ghclient.New.
type Clients struct {
	// GitHub uses the bot's token: threads, replies, reactions, permissions,
	// notifications.
	GitHub *github.Client
	// Control writes refs and reads/writes files in CONTROL; nil = GitHub.
	Control *github.Client
	// Dispatch sends repository_dispatch to CONTROL; nil = Control. It may
	// retry POSTs on 5xx: the runner treats an identical shard as harmless.
	Dispatch *github.Client
	// Budget is the account's write ledger the clients' pacer shares
	// (writebudget.Ledger; nil = none): Handle takes the grant its writes
	// need while it reads the thread, not before its first write.
	Budget Budget
}

// Budget is the account's shared write budget, as Handle uses it.
type Budget interface {
	// Ready takes the next grant when fewer than low writes are held,
	// blocking until it is held (writebudget.Ledger.Ready).
	Ready(ctx context.Context, low int) error
}

// mentionWrites is what a mention dispatched by a running dispatcher
// writes: its claim, the dispatch, the mark and the reaction.
const mentionWrites = 4

// Dispatcher turns triggers into decisions. It is safe for concurrent use.
type Dispatcher struct {
	cfg          Config
	gh, ctl, dsp *github.Client
	budget       Budget

	mu     sync.Mutex
	refs   *refstate.Store
	cl     claims
	blk    *blocklist.List
	blkAt  time.Time
	rateSt *rateState
	// ctlPublic caches the control repository's visibility once read.
	ctlPublic *bool
	// labels caches each thread repository's labels for CacheTTL (lower-
	// case owner/name): back-to-back mentions in a repository read them
	// once. A label made since is refused as missing, never the reverse
	// that matters: one deleted since is refused by publish's re-check.
	labels map[string]cachedLabels
}

// cachedLabels is one repository's labels and when they were read.
type cachedLabels struct {
	raw json.RawMessage
	at  time.Time
}

// freshLabels returns repo's labels when read within CacheTTL.
func (d *Dispatcher) freshLabels(repo string) json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.labels[strings.ToLower(repo)]
	if !ok || d.cfg.Now().Sub(c.at) >= d.cfg.CacheTTL {
		return nil
	}
	return c.raw
}

// keepLabels caches repo's labels as a build read them.
func (d *Dispatcher) keepLabels(repo string, raw json.RawMessage, at time.Time) {
	if raw == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.labels == nil {
		d.labels = map[string]cachedLabels{}
	}
	now := d.cfg.Now()
	for k, c := range d.labels { // drop what has expired: the map stays small
		if now.Sub(c.at) >= d.cfg.CacheTTL {
			delete(d.labels, k)
		}
	}
	if c, ok := d.labels[strings.ToLower(repo)]; ok && c.at.After(at) {
		return
	}
	d.labels[strings.ToLower(repo)] = cachedLabels{raw: raw, at: at}
}

// New checks cfg and returns a dispatcher. In a dry run the clients may be nil.

// sendTimeout bounds the claim → dispatch → mark step of one mention,
// which runs to its end even while the dispatcher shuts down.
const sendTimeout = 2 * time.Minute

func New(cfg Config, c Clients) (*Dispatcher, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if c.Control == nil {
		c.Control = c.GitHub
	}
	if c.Dispatch == nil {
		c.Dispatch = c.Control
	}
	if !cfg.DryRun && (c.GitHub == nil || c.Control == nil) {
		return nil, errors.New("dispatch: a GitHub client is required unless in a dry run")
	}
	d := &Dispatcher{cfg: cfg, gh: c.GitHub, ctl: c.Control, dsp: c.Dispatch, budget: c.Budget, cl: claims{holder: cfg.Holder,
		rel: map[string]refstate.Mark{}, held: map[string]refstate.Mark{}, sent: map[string]bool{}, making: map[string]chan struct{}{}}}
	if gb, ok := c.Budget.(grantBudget); ok {
		d.cl.grants = gb.OwnGrants()
	}
	return d, nil
}

// Refresh forgets the cached blocklist and rate state so the next trigger
// reads them again (the start of a poll cycle). Unwritten runs are kept.
func (d *Dispatcher) Refresh() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blk = nil
	if d.rateSt != nil {
		d.rateSt.loaded = time.Time{}
	}
}

func (d *Dispatcher) blocklist(ctx context.Context) (*blocklist.List, error) {
	d.mu.Lock()
	l, at := d.blk, d.blkAt
	d.mu.Unlock()
	if l != nil && d.cfg.Now().Sub(at) < d.cfg.CacheTTL {
		return l, nil
	}
	l, err := d.store().Load(ctx)
	if err != nil {
		return nil, err
	}
	d.setBlocklist(l)
	return l, nil
}

func (d *Dispatcher) setBlocklist(l *blocklist.List) {
	d.mu.Lock()
	d.blk, d.blkAt = l, d.cfg.Now()
	d.mu.Unlock()
}

func (d *Dispatcher) store() *blockfile.Store {
	return &blockfile.Store{Client: d.ctl, Repo: d.cfg.Control, Path: d.cfg.BlocklistPath, IDs: &identity.Resolver{Client: d.gh}}
}

// Handle decides what to do with one trigger and does it (SPEC order 1–7).
// An error means the trigger was not handled and should be retried later;
// the decision then says how far it got.
func (d *Dispatcher) Handle(ctx context.Context, t *Trigger) (dec Decision, err error) {
	dec = Decision{Trigger: refOf(t)}
	defer func() { d.logDecision(ctx, t, &dec, err) }()
	if err := checkTrigger(t); err != nil {
		return dec, err
	}
	dec.JobID = transport.JobID(t.NodeID)
	ignore := func(format string, a ...any) (Decision, error) {
		dec.Decision, dec.Reason = Ignore, fmt.Sprintf(format, a...)
		return dec, nil
	}

	// 1. Silent ignores.
	bot := d.cfg.Bot
	if strings.EqualFold(t.Author, bot) || strings.EqualFold(t.Author, bot+"[bot]") {
		return ignore("written by the bot itself")
	}
	if t.Edited {
		return ignore("edited: edits never trigger")
	}
	// The first mention decides, as the runner reads it; a stray !cfg is a
	// flag error.
	m, found, flags, flagErr := policy.FromComment(t.Body, bot)
	if !found {
		return ignore("no mention of @%s outside code, quotes and HTML", bot)
	}

	// 2. Opt-out commands: open to anyone, whatever the allow-list or the
	// blocklist (an opt-out only ever narrows what the bot does).
	if m.Command == mention.CommandGoAway || m.Command == mention.CommandComeBack {
		return d.optOut(ctx, t, m, dec)
	}
	if !d.cfg.Allowed.Allows(t.Author, t.AuthorID) {
		return ignore("@%s is not in ALLOWED_USERS", t.Author)
	}
	if d.cfg.DryRun {
		return d.dryRun(t, dec, flags, flagErr)
	}
	if t.recheck {
		// Seen by an earlier cycle: most likely dispatched already, so
		// look before reading the thread.
		if done, err := d.handled(ctx, dec.JobID); err != nil {
			return dec, err
		} else if done {
			return ignore("already dispatched (claim ref says so)")
		}
	}

	// What the mention needs and that needs no other answer is asked for at
	// once: the thread (read on while the checks below decide;
	// not for a !cfg error, which only replies), the opt-out list and the
	// rate state (cached in a running dispatcher), this process's claim
	// commit, and the write grant (the first write waits only for it).
	defer d.startReady(ctx)()
	var build *building
	if flagErr == nil {
		build = d.startBuild(ctx, t, flags)
		defer build.cancel()
	}
	l, st, err := d.prepare(ctx, t, build.listRead)
	if err != nil {
		return dec, err
	}
	if t.AuthorID != 0 && d.cfg.Allowed.byNameOnly(t.Author) {
		d.mu.Lock()
		learned := st.learnedID(t.Author)
		d.mu.Unlock()
		if learned != 0 && learned != t.AuthorID {
			return ignore("@%s is in ALLOWED_USERS by login only, and this account (id %d) is not the one first seen under that login (id %d): the login changed hands; pin it as %s:%d to allow this account",
				t.Author, t.AuthorID, learned, strings.ToLower(t.Author), t.AuthorID)
		}
	}
	if p, ok := l.Blocked(strings.ToLower(t.Repo)); ok {
		return ignore("%s is blocked by opt-out %q", t.Repo, p)
	}
	if p, ok := l.BlockedID(repoIDs(t)); ok {
		return ignore("%s is blocked by opt-out %q (same repository or owner id: renamed or transferred)", t.Repo, p)
	}

	// 3. Invalid !cfg: reply once, no run.
	if flagErr != nil {
		dec.Decision, dec.Reason = Reply, "invalid !cfg: "+flagErr.Error()
		return d.replyClaimed(ctx, t, dec, contract.ReplyCfg, cfgReply(t, bot, flagErr, policy.ValidFlagsHelp()))
	}
	// 3b. A private target's data never goes to a public control repo
	// unless the operator said it may.
	if t.RepoPrivate && !d.cfg.AllowPrivateTargets {
		public, err := d.controlPublic(ctx)
		if err != nil {
			return dec, err
		}
		if public {
			dec.Decision, dec.Reason = Reply, fmt.Sprintf("private repository, public control repository %s: no run (PRIVATE_TARGETS=refuse)", d.cfg.Control)
			return d.replyClaimed(ctx, t, dec, contract.ReplyPrivate, privateReply(t))
		}
	}

	pol := policy.Effective(flags, *d.cfg.Ceilings, policy.Thread{Repo: t.Repo, Number: t.Number}, l)
	dec.Policy = &pol

	// 4. Per-user rate limit.
	if d.cfg.RatePerHour > 0 {
		now := d.cfg.Now()
		d.mu.Lock()
		n, retry := st.count(t.Author, dec.JobID, now), st.nextSlot(t.Author, dec.JobID, now)
		d.mu.Unlock()
		if n >= d.cfg.RatePerHour {
			dec.Decision = Reply
			dec.Reason = fmt.Sprintf("rate limit: @%s already has %d runs in the last hour (limit %d)", t.Author, n, d.cfg.RatePerHour)
			return d.replyClaimed(ctx, t, dec, contract.ReplyRate, rateReply(t, d.cfg.RatePerHour, retry))
		}
	}

	// 5–6. Claim while the thread is read; then build the context, send,
	// mark dispatched. Once claimed, a shutdown (ctx cancelled) must not cut
	// this short: that would leave a claim that waits out its lease. So the
	// step runs to its end on a context of its own, bounded by sendTimeout.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
	defer cancel()
	marked := d.ensureShared(sctx, StatusDispatched)
	ok, err := d.claim(sctx, dec.JobID)
	claimedAt := d.cfg.Now()
	res, berr := build.wait()
	if err != nil {
		return dec, errors.Join(err, berr)
	}
	if !ok {
		return ignore("already dispatched (claim ref says so)")
	}
	// Claimed: every way out below settles the claim.
	skip := func(format string, a ...any) (Decision, error) {
		// Deliberately skipped: marked so no cycle looks at it again.
		dec, _ = ignore(format, a...)
		return dec, d.settle(sctx, dec.JobID, StatusDispatched)
	}
	giveUp := func(err error) (Decision, error) {
		return dec, errors.Join(err, d.release(sctx, dec.JobID))
	}
	if errors.Is(berr, threadctx.ErrTriggerNotFound) {
		return skip("the trigger is gone from the thread (deleted?)")
	}
	if berr != nil {
		return giveUp(berr)
	}
	if res.Trigger.Body != t.Body {
		return skip("the trigger was edited before it could be dispatched: edits never trigger")
	}
	reqs, err := transport.Encode(dec.JobID, res.JSON, d.cfg.Now())
	if err != nil {
		return giveUp(fmt.Errorf("encode context of %s: %w", t.URL, err))
	}
	d.mu.Lock()
	sent := d.cl.sent[dec.JobID]
	d.mu.Unlock()
	n := len(reqs)
	if !sent {
		// A send whose answer was lost may have landed: sending again
		// delivers the job twice, which the runner makes harmless.
		n, err = d.send(sctx, reqs)
		dec.Dispatches = n
		if err != nil {
			if rerr := d.release(sctx, dec.JobID); rerr != nil {
				return dec, errors.Join(err, rerr)
			}
			d.cfg.Logger.Warn("dispatch failed; claim released so a later cycle retries", "jobid", dec.JobID, "sent", n, "total", len(reqs), "error", err.Error())
			return dec, err
		}
		d.mu.Lock()
		d.cl.sent[dec.JobID] = true
		d.mu.Unlock()
		if d.cfg.Dispatched != nil {
			d.cfg.Dispatched(dec.JobID, d.cfg.Now().Sub(claimedAt))
		}
	}
	dec.Dispatches = n
	if d.cfg.RatePerHour > 0 {
		d.recordRun(t.Author, dec.JobID)
	}
	if d.cfg.Allowed.byNameOnly(t.Author) {
		d.learnID(t.Author, t.AuthorID)
	}

	// 6–7. Mark dispatched, acknowledge and (event mode) write the rate
	// state, together: none needs another's answer. A failed reaction does
	// not undo the run.
	var g errgroup.Group
	g.Go(func() error {
		// Sent but not marked: the thread stays unread and the next cycle
		// marks it (this process) or sends again (another one).
		select {
		case <-marked:
		case <-sctx.Done():
		}
		return d.settle(sctx, dec.JobID, StatusDispatched)
	})
	g.Go(func() error {
		if err := d.react(sctx, t); err != nil {
			d.cfg.Logger.Warn("reaction failed", "url", t.URL, "jobid", dec.JobID, "error", err.Error())
		}
		return nil
	})
	if d.cfg.FlushEach {
		g.Go(func() error { return d.Flush(sctx) })
	}
	if err := g.Wait(); err != nil {
		return dec, err
	}
	if d.cfg.Allowed.byNameOnly(t.Author) {
		d.learnID(t.Author, t.AuthorID)
	}
	dec.Decision = Dispatch
	dec.Reason = fmt.Sprintf("sent %d %s event(s), context %d bytes", n, reqs[0].EventType, len(res.JSON))
	return dec, nil
}

// dryRun decides without any request: blocklist, rate limit and dedupe are
// not checked.
func (d *Dispatcher) dryRun(t *Trigger, dec Decision, flags policy.Flags, flagErr error) (Decision, error) {
	if flagErr != nil {
		dec.Decision, dec.Reason = Reply, "dry run: would reply: invalid !cfg: "+flagErr.Error()
		return dec, nil
	}
	pol := policy.Effective(flags, *d.cfg.Ceilings, policy.Thread{Repo: t.Repo, Number: t.Number}, nil)
	dec.Policy = &pol
	dec.Decision, dec.Reason = Dispatch, "dry run: blocklist, rate limit and dedupe not checked"
	return dec, nil
}

// prepare returns the opt-out list and the rate state (which also holds
// the ids learned for ALLOWED_USERS; an empty one when t needs neither),
// and makes sure this process has a claim commit: read or made together,
// each only when not cached.
// listRead, when set, is handed the opt-out list as soon as it is read.
func (d *Dispatcher) prepare(ctx context.Context, t *Trigger, listRead func(*blocklist.List)) (*blocklist.List, *rateState, error) {
	var l *blocklist.List
	st := &rateState{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if l, err = d.blocklist(gctx); err == nil && listRead != nil {
			listRead(l)
		}
		return err
	})
	if d.cfg.RatePerHour > 0 || t.AuthorID != 0 && d.cfg.Allowed.byNameOnly(t.Author) {
		g.Go(func() (err error) { st, err = d.rate(gctx); return err })
	}
	g.Go(func() error { _, err := d.claimMark(gctx); return err })
	return l, st, g.Wait()
}

// startReady asks the write budget for the grant the mention's writes
// need, beside the reads; the returned func waits for it to end.
func (d *Dispatcher) startReady(ctx context.Context) (wait func()) {
	if d.budget == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Its error is ctx's; a write that needs the grant waits for it
		// (or takes its own) on the send step's context.
		_ = d.budget.Ready(ctx, d.writesAhead())
	}()
	return func() {
		<-done
		if idle, ok := d.budget.(interface{ Idle() }); ok && d.cfg.FlushEach {
			// event mode: the process ends with the mention, so what the
			// grant left (a rotation's opening, writebudget) is finished
			// first, beside the mention's last writes, not by the next
			// process
			idle.Idle()
		}
	}
}

// writesAhead is how many writes the budget should hold as a mention
// starts: the mention's own (with this process's claim and dispatched
// commits when it has none yet), in event mode the rate state's, and in
// a running process the next mention's first writes: its claim and its
// dispatch go out while the grant it takes beside its read is still
// being recorded (its mark and 👀 wait for that grant). Counting the next
// mention's whole writes instead takes every grant a mention early,
// while the last grant's slots still cover the next mention, and a
// grant lives only Hold. Only a running process's first mention asks
// for the next one whole: its grant is the first (sized by what is asked,
// not yet grown by use). A running process writes the rate state once
// per CacheTTL beside the mentions (FlushEvery), and that write takes a
// grant of its own when it finds none held.
func (d *Dispatcher) writesAhead() int {
	n := mentionWrites
	d.mu.Lock()
	first := d.cl.cur.Commit == ""
	if first || d.cfg.Now().Sub(d.cl.cur.At) >= d.claimRotate() {
		n += 2 // a claim commit and its dispatched commit
		if d.cl.grants {
			n-- // the claim commit is the grant's (grantMark)
		}
	}
	d.mu.Unlock()
	switch {
	case d.cfg.FlushEach:
		return n + 1 // the rate state, written with the mention
	case first:
		return n + mentionWrites
	}
	return n + writesBeforeGrant
}

// writesBeforeGrant is how many of a mention's writes go out before a
// grant taken beside its thread read is recorded: the claim (beside the
// read) and the dispatch.
const writesBeforeGrant = 2

// building is a context being built in the background.
type building struct {
	done   chan struct{}
	res    *threadctx.Result
	err    error
	cancel context.CancelFunc
	// list receives the opt-out list (once), which decides whose labels
	// besides the thread repository's are read.
	list chan *blocklist.List
}

func (d *Dispatcher) startBuild(ctx context.Context, t *Trigger, flags policy.Flags) *building {
	ctx, cancel := context.WithCancel(ctx)
	b := &building{done: make(chan struct{}), cancel: cancel, list: make(chan *blocklist.List, 1)}
	req := threadctx.Request{
		Repo: t.Repo, Number: t.Number, IsPR: t.IsPR, TriggerNodeID: t.NodeID,
		Repository: t.Repository, Issue: t.pre.issue, PullRequest: t.pre.pull,
		Comments: t.pre.comments, Reviews: t.pre.reviews, ReviewComments: t.pre.reviewComnts,
		Labels: d.freshLabels(t.Repo),
	}
	started := d.cfg.Now()
	if len(flags.AllowRepos) > 0 && !flags.CommentOnly && !flags.HereOnly {
		req.LabelRepos = func(ctx context.Context) threadctx.LabelRepos { return d.labelRepos(ctx, t, flags, b.list) }
	}
	go func() {
		defer close(b.done)
		b.res, b.err = threadctx.Build(ctx, d.gh, req, d.cfg.Context)
		if b.err == nil && req.Labels == nil {
			d.keepLabels(t.Repo, b.res.Labels, started)
		}
	}()
	return b
}

// listRead hands the opt-out list to the build (nil b: no build).
func (b *building) listRead(l *blocklist.List) {
	if b != nil {
		b.list <- l
	}
}

// labelRepos decides whose labels the context carries besides the thread
// repository's: the repositories repo= names, but none a label change
// could never reach (deny=, the opt-out list, the control repository),
// which are not read at all. It waits for the opt-out list; a build
// cancelled first reads none. While a private repository's data must not
// go to the control repository (PRIVATE_TARGETS=refuse and a public or
// unreadable control repository), only public repositories' labels go in.
func (d *Dispatcher) labelRepos(ctx context.Context, t *Trigger, flags policy.Flags, list <-chan *blocklist.List) threadctx.LabelRepos {
	var lr threadctx.LabelRepos
	for _, r := range flags.AllowRepos {
		if !strings.EqualFold(r, t.Repo) && !strings.EqualFold(r, d.cfg.Control) && !slices.ContainsFunc(flags.DenyRepos, func(x string) bool { return strings.EqualFold(x, r) }) {
			lr.Repos = append(lr.Repos, r)
		}
	}
	if len(lr.Repos) == 0 {
		return lr
	}
	// the control repository's visibility (once per process) is read while
	// the opt-out list is
	public := make(chan bool, 1)
	if d.cfg.AllowPrivateTargets {
		public <- false
	} else {
		go func() {
			p, err := d.controlPublic(ctx)
			public <- p || err != nil
		}()
	}
	var l *blocklist.List
	select {
	case l = <-list:
	case <-ctx.Done():
		return threadctx.LabelRepos{}
	}
	lr.Repos = slices.DeleteFunc(lr.Repos, func(r string) bool { _, blocked := l.Blocked(strings.ToLower(r)); return blocked })
	lr.PublicOnly = <-public
	return lr
}

func (b *building) wait() (*threadctx.Result, error) {
	<-b.done
	return b.res, b.err
}

// replyClaimed claims the mention, then replies once; on failure the claim
// is released so a retry replies (and finds the marker if the reply landed).
func (d *Dispatcher) replyClaimed(ctx context.Context, t *Trigger, dec Decision, kind, body string) (Decision, error) {
	ok, err := d.claim(ctx, dec.JobID)
	if err != nil {
		return dec, err
	}
	if !ok {
		dec.Decision, dec.Reason = Ignore, "already handled (claim ref says so)"
		return dec, nil
	}
	// Handle ignores a blocked repository before any reply of this kind.
	why, err := d.replySlot(ctx, t, dec.JobID, kind, false, false)
	if err != nil {
		return dec, errors.Join(err, d.release(ctx, dec.JobID))
	}
	if why != "" {
		dec.ReplySuppressed = why
		dec.Reason += "; no reply: " + why
		return dec, d.settle(ctx, dec.JobID, StatusDispatched)
	}
	if err := d.replyOnce(ctx, t, kind, body); err != nil {
		return dec, errors.Join(err, d.release(ctx, dec.JobID))
	}
	return dec, d.settle(ctx, dec.JobID, StatusDispatched)
}

// optOut handles "go away" and "come back" (SPEC §7).
func (d *Dispatcher) optOut(ctx context.Context, t *Trigger, m mention.Mention, dec Decision) (Decision, error) {
	goAway := m.Command == mention.CommandGoAway
	dec.Decision = Unblock
	if goAway {
		dec.Decision = Block
	}
	if d.cfg.DryRun {
		dec.Reason = fmt.Sprintf("dry run: authority not checked; would %s at least %s/*", dec.Decision, strings.ToLower(t.Author))
		return dec, nil
	}
	ok, err := d.claim(ctx, dec.JobID)
	if err != nil {
		return dec, err
	}
	if !ok {
		dec.Decision, dec.Reason = Ignore, "already handled (claim ref says so)"
		return dec, nil
	}
	fail := func(err error) (Decision, error) { return dec, errors.Join(err, d.release(ctx, dec.JobID)) }
	a, err := d.authority(ctx, t)
	if err != nil {
		return fail(err)
	}
	pats := a.Patterns()
	if !goAway {
		pats = a.LiftPatterns()
	}
	changed := 0
	msg := fmt.Sprintf("mention-runner: @%s says %q on %s", t.Author, strings.ReplaceAll(string(m.Command), "_", " "), t.URL)
	l, err := d.store().Update(ctx, msg, func(l *blocklist.List) bool {
		if goAway {
			changed = l.Add(pats, t.Author, t.URL, d.cfg.Now())
			l.SetIDs(t.Repo, repoIDs(t))
			l.SetID(strings.ToLower(t.Author)+"/*", t.AuthorID)
		} else {
			idOf, accounts, repos := liftIDs(a, t)
			changed = l.Remove(pats, idOf) + l.RemoveIDs(accounts, repos)
		}
		return changed > 0
	})
	if err != nil {
		return fail(err)
	}
	d.setBlocklist(l)
	dec.Reason = fmt.Sprintf("%sed %s (%d changed) for @%s", dec.Decision, strings.Join(pats, ", "), changed, t.Author)
	kind, body := contract.ReplyGoAway, goAwayReply(t, d.cfg.Bot, pats)
	if !goAway {
		kind, body = contract.ReplyComeBack, comeBackReply(t, changed, pats)
	}
	// The block always applies. The reply: nothing in a repository the
	// list blocks (as it stands now) but the confirmation of a "go away"
	// that changed the list (SPEC §7), and only within the reply budgets
	// and the per-user-and-repository opt-out cap, so opt-outs (open to
	// anyone) cannot make the bot spam.
	by, blocked := l.Blocked(strings.ToLower(t.Repo))
	if !blocked {
		by, blocked = l.BlockedID(repoIDs(t))
	}
	// confirm: the entry blocking the repository is this mention's own (a
	// retry after the list's write was stored but its answer lost changes
	// nothing, and still confirms). Another user's "go away" in a blocked
	// repository blocks their account silently.
	confirm := false
	for _, e := range l.Entries {
		confirm = confirm || blocked && goAway && e.Pattern == by && e.Source == t.URL
	}
	capped, err := d.optOutCapped(ctx, t, dec.JobID)
	if err != nil {
		return fail(err)
	}
	var why string
	if capped && (!blocked || confirm) {
		why = fmt.Sprintf("@%s already had %d opt-out replies on %s in the last hour", t.Author, OptOutRepliesPerHour, t.Repo)
		d.cfg.Logger.Warn("reply suppressed", "kind", kind, "url", t.URL, "jobid", dec.JobID, "repo", t.Repo, "author", t.Author, "reason", why)
	} else if why, err = d.replySlot(ctx, t, dec.JobID, kind, blocked, confirm); err != nil {
		return fail(err)
	} else if why == "" {
		d.recordRun(optOutKey(t), dec.JobID)
	}
	if why != "" {
		dec.ReplySuppressed = why
		dec.Reason += "; no reply: " + why
		return dec, d.settle(ctx, dec.JobID, StatusDispatched)
	}
	if err := d.replyOnce(ctx, t, kind, body); err != nil {
		return fail(err)
	}
	return dec, d.settle(ctx, dec.JobID, StatusDispatched)
}

// liftIDs are the ids "come back" lifts by, matching LiftPatterns: idOf
// gives the id behind each name the commenter speaks for (their login, the
// thread's owner and repository), so an entry keeping another id (the name
// changed hands) stays; accounts and repos lift entries written under a
// name since changed: the commenter's own account always, the thread's
// owner when they administer that organisation, the thread's repository
// when they may write to it or own it.
func liftIDs(a blocklist.Authority, t *Trigger) (idOf map[string]int64, accounts, repos []int64) {
	ids := repoIDs(t)
	login := strings.ToLower(t.Author)
	owner, _, _ := strings.Cut(strings.ToLower(t.Repo), "/")
	idOf = map[string]int64{login + "/*": t.AuthorID, strings.ToLower(t.Repo): ids.Repo}
	if owner != login {
		idOf[owner+"/*"] = ids.Owner
	}
	if t.AuthorID != 0 {
		accounts = append(accounts, t.AuthorID)
	}
	if a.OrgAdmin && ids.Owner != 0 {
		accounts = append(accounts, ids.Owner)
	}
	if ids.Repo != 0 && (a.CanWrite || owner == login) {
		repos = append(repos, ids.Repo)
	}
	return idOf, accounts, repos
}

// repoIDs reads the numeric ids of the trigger's repository and owner from
// the repository object the mode already holds (zero when absent).
func repoIDs(t *Trigger) blocklist.RepoIDs {
	var r struct {
		ID    int64 `json:"id"`
		Owner struct {
			ID int64 `json:"id"`
		} `json:"owner"`
	}
	if len(t.Repository) > 0 && json.Unmarshal(t.Repository, &r) == nil {
		return blocklist.RepoIDs{Repo: r.ID, Owner: r.Owner.ID}
	}
	return blocklist.RepoIDs{}
}

// OptOutRepliesPerHour caps the bot's replies to "go away" / "come back"
// from one user on one repo.
const OptOutRepliesPerHour = 2

// optOutKey is the rate-state key of the opt-out replies to one user on
// one repository (a key no login can take).
func optOutKey(t *Trigger) string {
	return "opt-out:" + strings.ToLower(t.Author) + "@" + strings.ToLower(t.Repo)
}

// optOutCapped reports whether the opt-out replies to this user on this
// repository have reached OptOutRepliesPerHour; the caller records a reply
// it posts under optOutKey.
func (d *Dispatcher) optOutCapped(ctx context.Context, t *Trigger, jobID string) (bool, error) {
	st, err := d.rate(ctx)
	if err != nil {
		return false, err
	}
	d.mu.Lock()
	n := st.count(optOutKey(t), jobID, d.cfg.Now())
	d.mu.Unlock()
	return n >= OptOutRepliesPerHour, nil
}

func checkTrigger(t *Trigger) error {
	var bad []string
	if !policy.ValidRepo(t.Repo) {
		bad = append(bad, fmt.Sprintf("repo %q is not owner/name", t.Repo))
	}
	if t.Number <= 0 {
		bad = append(bad, fmt.Sprintf("number %d is not positive", t.Number))
	}
	if t.NodeID == "" {
		bad = append(bad, "node id is empty")
	}
	if len(bad) > 0 {
		return fmt.Errorf("dispatch: bad trigger %s: %s", t.URL, strings.Join(bad, "; "))
	}
	return nil
}

func (d *Dispatcher) logDecision(ctx context.Context, t *Trigger, dec *Decision, err error) {
	attrs := []slog.Attr{
		slog.String("url", t.URL), slog.String("jobid", dec.JobID), slog.String("decision", dec.Decision),
		slog.String("reason", dec.Reason), slog.String("event", t.Event), slog.String("repo", t.Repo),
		slog.Int("number", t.Number), slog.String("author", t.Author),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
		d.cfg.Logger.LogAttrs(ctx, slog.LevelError, "trigger failed", attrs...)
		return
	}
	d.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "trigger", attrs...)
}

// LedgerMaxBlock is how large a busy dispatcher's grants grow: about what
// its pacer's one-second write gap lets it use within a grant's 15 s
// hold once the mention that takes the next grant ahead has written
// (bigger grants go partly unused, and unused slots hold the account's
// windows all the same).
const LedgerMaxBlock = 12

// LedgerOptions are the dispatcher's options for the account's write
// ledger (writebudget) in control, reached with client (CONTROL_TOKEN)
// and written with push (nil: the REST API): its updates are counted as
// the bot's own writes (one push each, or a commit and a ref update), and
// its grants grow while it is busy. The caller adds the clock and Warn.
func LedgerOptions(client *github.Client, push *refpush.Client, control, bot string) writebudget.Options {
	return writebudget.Options{Client: client, Push: push, Repo: control, Account: bot, Holder: newHolder(),
		SelfCost: writebudget.UpdateCost(push), MaxBlock: LedgerMaxBlock, Guess: true}
}

// controlPublic reads whether the control repository is public, once per
// process (a repository's visibility rarely changes; a restart reads it
// again). An unreadable answer is an error, never "private".
func (d *Dispatcher) controlPublic(ctx context.Context) (bool, error) {
	d.mu.Lock()
	known := d.ctlPublic
	d.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	owner, name, _ := strings.Cut(d.cfg.Control, "/")
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	r, _, err := d.ctl.Repositories.Get(ctx, owner, name)
	if err != nil {
		return false, fmt.Errorf("read the visibility of the control repository %s: %w", d.cfg.Control, err)
	}
	public := !r.GetPrivate()
	d.mu.Lock()
	d.ctlPublic = &public
	d.mu.Unlock()
	return public, nil
}
