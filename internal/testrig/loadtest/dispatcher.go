package loadtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// NewDispatcher builds a dispatcher as one dispatcher process would: a
// client per token, and a pacer per identity, since GitHub counts content
// creation per account. Its control token is w.DispatcherControl (the
// bot's by default): another identity's writes the ledger at no cost to
// the bot, and falls back to the bot's token while it is refused, as
// cmd/dispatcher does. opts change the configuration (e.g. FlushEach for
// event mode).
func (w *World) NewDispatcher(opts ...func(*dispatch.Config)) (*dispatch.Dispatcher, error) {
	ctlTok := w.DispatcherControl
	if ctlTok == "" {
		ctlTok = ControlToken
	}
	own := ctlTok != ControlToken // another identity than the bot's
	var ctlPacer *ghclient.Pacer
	if own {
		ctlPacer = w.Pacer() // the control identity's own limits, its ledger writes included
	}
	var ownErr error
	botPacer, ledger, err := w.ProcessPacer(ctlTok, func(o *writebudget.Options) {
		// the dispatcher's own ledger options, as cmd/dispatcher sets them
		mine := dispatch.LedgerOptions(o.Client, o.Push, o.Repo, o.Account)
		o.SelfCost, o.Block, o.MaxBlock, o.Guess = mine.SelfCost, mine.Block, mine.MaxBlock, mine.Guess
		if own {
			o.SelfCost = 0
			if o.Client, ownErr = w.Client(ctlTok, true, ctlPacer); ownErr == nil {
				o.Push, ownErr = w.Pusher(o.Client, ctlTok)
			}
			if o.Fallback == nil && ownErr == nil {
				o.Fallback, ownErr = w.Client(BotToken, true, nil)
			}
			if o.FallbackPush == nil && ownErr == nil {
				o.FallbackPush, ownErr = w.Pusher(o.Fallback, BotToken)
			}
			o.FallbackCost = writebudget.UpdateCost(o.FallbackPush)
		}
	})
	if err != nil {
		return nil, err
	}
	if ownErr != nil {
		return nil, ownErr
	}
	if !own {
		ctlPacer = botPacer
	}
	gh, err := w.Client(BotToken, false, botPacer)
	if err != nil {
		return nil, err
	}
	// as cmd/dispatcher's: its control writes (claim refs, state commits,
	// sha-guarded files) are each recognised when repeated
	ctl, err := w.Client(ctlTok, true, ctlPacer)
	if err != nil {
		return nil, err
	}
	dsp, err := w.Client(ctlTok, true, ctlPacer)
	if err != nil {
		return nil, err
	}
	// as cmd/dispatcher's: CONTROL's refs pushed as the control token
	push, err := refpush.ForAPI(ctl, ctlTok)
	if err != nil {
		return nil, err
	}
	cfg := dispatch.Config{Bot: Bot, Control: Control, Allowed: dispatch.ParseAllowList("*"), Now: w.Clock.Now, Push: push}
	for _, o := range opts {
		o(&cfg)
	}
	c := dispatch.Clients{GitHub: gh, Control: ctl, Dispatch: dsp}
	if ledger != nil {
		c.Budget = ledger
	}
	return dispatch.New(cfg, c)
}

// pollInterval is the time between DispatchAll's cycles (a poller's
// interval: GitHub's X-Poll-Interval is 60 s).
const pollInterval = time.Minute

// DispatchStats says how a DispatchAll went.
type DispatchStats struct {
	Cycles   int
	Failures int // Handle errors, retried in a later cycle
	Restarts int // dispatcher processes replaced mid-cycle
	Decided  map[string]string
}

// DispatchAll handles every mention, as poll cycles would: a mention whose
// handling failed is tried again next cycle. When restart is non-nil it is
// asked before each mention whether to "kill" the process: the current
// context is cancelled during that mention's handling (after the returned
// delay, real time) and a fresh dispatcher takes over, from
// the first mention again, as a restarted poller re-reads its notifications.
func (w *World) DispatchAll(ctx context.Context, ms []Mention, maxCycles int, restart func() (bool, time.Duration)) (*DispatchStats, error) {
	st := &DispatchStats{Decided: map[string]string{}}
	d, err := w.NewDispatcher()
	if err != nil {
		return nil, err
	}
	for st.Cycles = 1; st.Cycles <= maxCycles; st.Cycles++ {
		pending := 0
		// as a poll cycle: its dispatched marks are written together at
		// its end (a killed process's are lost with it)
		cctx, flushMarks := d.BatchMarks(ctx)
		parallel := restart == nil && w.ThreadsAtOnce > 0
		if parallel {
			// as a poll cycle: threads side by side, a thread's mentions
			// in order, so claims made at once share a push
			pending += w.handleThreads(cctx, d, ms, st)
		}
		for _, m := range ms {
			if parallel {
				break
			}
			if _, done := st.Decided[m.JobID]; done {
				continue
			}
			hctx, cancel := context.WithCancel(cctx)
			killed := false
			var stop func()
			if restart != nil {
				if kill, after := restart(); kill {
					killed = true
					timer := time.AfterFunc(after, cancel)
					stop = func() { timer.Stop() }
				}
			}
			dec, err := d.Handle(hctx, m.DispatchTrigger())
			if restart != nil {
				// a process killed mid-cycle would lose what it did not
				// write yet: here each mention's rate entry is written
				_ = d.Flush(hctx)
			}
			if stop != nil {
				stop()
			}
			cancel()
			if killed {
				st.Restarts++
				if d, err = w.NewDispatcher(); err != nil {
					return st, err
				}
				cctx, flushMarks = d.BatchMarks(ctx)
			}
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			if err != nil || killed {
				st.Failures++
				pending++
				continue
			}
			st.Decided[m.JobID] = dec.Decision
		}
		for job := range flushMarks(ctx) {
			// its thread stays unread: the next cycle marks it
			delete(st.Decided, job)
			st.Failures++
			pending++
		}
		// as a poll cycle: the rate state is written once, at its end
		if err := d.Flush(ctx); err != nil {
			st.Failures++
		}
		if pending == 0 {
			return st, nil
		}
		// Cycles are a poll interval apart: a claim left by a killed
		// process is taken over once its lease ran out.
		w.Clock.Advance(pollInterval)
	}
	return st, fmt.Errorf("loadtest: %d mentions still failing after %d cycles", len(ms)-len(st.Decided), maxCycles)
}

// handleThreads handles the undecided mentions of ms, threads side by
// side (ThreadsAtOnce at once), and returns how many failed.
func (w *World) handleThreads(ctx context.Context, d *dispatch.Dispatcher, ms []Mention, st *DispatchStats) (failed int) {
	var threads [][]Mention
	at := map[string]int{}
	for _, m := range ms {
		if _, done := st.Decided[m.JobID]; done {
			continue
		}
		key := fmt.Sprintf("%s#%d", m.Repo, m.Number)
		i, ok := at[key]
		if !ok {
			i = len(threads)
			at[key] = i
			threads = append(threads, nil)
		}
		threads[i] = append(threads[i], m)
	}
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(w.ThreadsAtOnce)
	for _, th := range threads {
		g.Go(func() error {
			for _, m := range th {
				dec, err := d.Handle(ctx, m.DispatchTrigger())
				mu.Lock()
				if err != nil {
					st.Failures++
					failed++
				} else {
					st.Decided[m.JobID] = dec.Decision
				}
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // every error is its mention's
	return failed
}

// Jobs groups the dispatches CONTROL received by jobid. Dispatches are
// only ever added: each is parsed once (workers that publish as jobs
// arrive call this for every job).
func (w *World) Jobs() (map[string][]githubsim.Dispatch, error) {
	w.jobsMu.Lock()
	defer w.jobsMu.Unlock()
	if w.jobs == nil {
		w.jobs = map[string][]githubsim.Dispatch{}
	}
	ds := w.Sim.Dispatches(Control)
	for _, d := range ds[w.jobsSeen:] {
		_, p, err := transport.ParseLine(d.Body)
		if err != nil {
			return nil, fmt.Errorf("dispatch %q: %w", d.EventType, err)
		}
		w.jobs[p.JobID] = append(w.jobs[p.JobID], d)
		w.jobsSeen++
	}
	out := make(map[string][]githubsim.Dispatch, len(w.jobs))
	for id, jd := range w.jobs {
		out[id] = slices.Clip(jd) // a caller's append does not reach ours
	}
	return out, nil
}

// JobContext reassembles a job's context from its first complete delivery
// (a delivery: the events of one timestamp). A job sent again after an
// ambiguous failure is delivered more than once; a dispatcher that failed
// halfway through a sharded job's events sends the whole job again with a
// new timestamp, and assemble proceeds with that one (the newer wins), so
// the first delivery may be incomplete.
func JobContext(ds []githubsim.Dispatch) ([]byte, error) {
	var order []string
	byTime := map[string]*transport.Assembler{}
	for _, d := range ds {
		et, p, err := transport.ParseLine(d.Body)
		if err != nil {
			return nil, err
		}
		a := byTime[p.Timestamp]
		if a == nil {
			a = transport.NewAssembler(transport.Options{})
			byTime[p.Timestamp] = a
			order = append(order, p.Timestamp)
		}
		if _, err := a.Add(et, p); err != nil {
			return nil, err
		}
	}
	if len(order) == 0 {
		return transport.NewAssembler(transport.Options{}).Context() // "no events received"
	}
	var firstErr error
	for _, ts := range order {
		c, err := byTime[ts].Context()
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// PollOnce is one `dispatcher once` run: a fresh dispatcher process that
// polls the bot's notifications for one cycle.
func (w *World) PollOnce(ctx context.Context, opts ...func(*dispatch.Config)) (dispatch.CycleResult, error) {
	d, err := w.NewDispatcher(opts...)
	if err != nil {
		return dispatch.CycleResult{}, err
	}
	gh, err := w.Client(BotToken, false, nil)
	if err != nil {
		return dispatch.CycleResult{}, err
	}
	return (&dispatch.Poller{D: d, Client: gh, Sleep: w.Clock.Sleep, Now: w.Clock.Now}).Once(ctx)
}
