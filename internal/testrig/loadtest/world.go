package loadtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// Names used by the world.
const (
	Bot          = "mrbot"
	Control      = "ops/control"
	BotToken     = "bot-token"     // the bot: threads, reactions, replies, publish writes
	ControlToken = "control-token" // the dispatcher's CONTROL token: refs, dispatches
	// OwnControlToken is a CONTROL_TOKEN of an identity of its own
	// (ControlLogin), neither the bot nor the workflow.
	OwnControlToken = "own-control-token"
	ControlLogin    = "ops-bookkeeper"
)

// WorldOptions size a world.
type WorldOptions struct {
	Repos int   // target repositories owner%02d/repo
	Seed  int64 // fault injection
	// Latency, when set, delays every request by this much (a slow fault
	// on every route), as a far-away GitHub would.
	Latency time.Duration
	// Start is the simulator's clock at the start; zero = a fixed date.
	// Worlds that real processes (on the real clock) write to start now,
	// so state they date (claims, job state) is not taken for stale.
	Start time.Time
	// Bubble runs the world in the caller's testing/synctest bubble (call
	// NewWorld inside synctest.Test): the simulator is served in memory
	// (githubsim.InMemory, no socket) and the clock is the bubble's
	// (fakeclock.Bubble), so concurrent processes (goroutines) wait as
	// separate processes would, and time never moves while one of them is
	// between taking a write slot and sending the write. Start is then the
	// bubble's (2000-01-01).
	Bubble bool
}

// World is a started simulator with target repos, the control repo and
// the bot's accounts.
type World struct {
	Sim   *githubsim.Sim
	Base  string
	Clock *fakeclock.Clock
	Repos []string

	srv     *httptest.Server  // nil in a bubble
	rt      http.RoundTripper // requests to the simulator; nil = over srv's socket
	spans   spanLog
	kills   killer
	seeded  int    // mentions seeded so far, for unique names
	tmp     string // run directories of Assemble
	tmpOnce sync.Once
	// SharedBudget makes every process of the bot account (each
	// dispatcher, each publish run) reserve its writes from the account's
	// ledger in CONTROL (writebudget), as the real binaries do.
	SharedBudget bool
	// DispatcherControl is the dispatcher's CONTROL_TOKEN: ControlToken
	// (the bot's, the default), OwnControlToken (an identity of its own) or
	// RunnerToken (the workflow's, shared with every job's bookkeeping).
	DispatcherControl string
	// PublishControl makes publish write CONTROL (the log issue, job
	// state) with the workflow's token, as cmd/runner publish does; unset,
	// with the bot's.
	PublishControl bool
	procs          int // processes that took a ledger handle, for holder names
	procsMu        sync.Mutex
	// PadEvery, when set, gives every PadEvery-th seeded thread a comment
	// big enough that its context is sent as agent_shard events.
	PadEvery int
	// ThreadsAtOnce, when set, has DispatchAll's cycles without kills
	// handle that many threads side by side, as a poll cycle does (its
	// order then varies from run to run); unset, one mention after
	// another, in a seeded order.
	ThreadsAtOnce int

	jobsMu   sync.Mutex
	jobs     map[string][]githubsim.Dispatch // Jobs, by jobid
	jobsSeen int                             // dispatches parsed into jobs
}

// NewWorld starts a simulator. Close it with Close.
func NewWorld(o WorldOptions) (*World, error) {
	start := o.Start
	if start.IsZero() {
		start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	}
	clk := fakeclock.New(start)
	if o.Bubble {
		clk = fakeclock.Bubble()
	}
	sim, err := githubsim.New(githubsim.Options{Seed: o.Seed, Now: clk.Now})
	if err != nil {
		return nil, fmt.Errorf("loadtest world: %w", err)
	}
	w := &World{Sim: sim, Clock: clk}
	if h := w.spans.wrap(w.kills.wrap(sim.Handler())); o.Bubble {
		w.rt, w.Base = githubsim.InMemory(h), sim.URL()
	} else {
		w.srv = httptest.NewServer(h)
		w.Base = w.srv.URL + "/"
	}
	sim.SetRequestLogLimit(0)
	sim.AddUser(Bot)
	sim.AddUser("ops")
	sim.AddToken(BotToken, Bot)
	sim.AddToken(ControlToken, Bot)
	sim.AddUser(RunnerLogin)
	sim.AddToken(RunnerToken, RunnerLogin)
	sim.AddUser(ControlLogin)
	sim.AddToken(OwnControlToken, ControlLogin)
	if _, err := sim.AddRepo(Control, true); err != nil {
		return nil, w.fail(err)
	}
	sim.SetPermission(Control, Bot, "write")
	sim.SetPermission(Control, RunnerLogin, "write")
	sim.SetPermission(Control, ControlLogin, "write")
	for i := 0; i < o.Repos; i++ {
		owner := fmt.Sprintf("owner%02d", i)
		sim.AddUser(owner)
		repo := owner + "/repo"
		if _, err := sim.AddRepo(repo, false); err != nil {
			return nil, w.fail(err)
		}
		w.Repos = append(w.Repos, repo)
		// labels need the triage role; each repository has the two
		// labels the jobs change
		// (write: a push onto a pull request's branch needs it)
		sim.SetPermission(repo, Bot, "write")
		for _, l := range []string{AddedLabel, TriageLabel} {
			if err := sim.CreateLabel(repo, l, ""); err != nil {
				return nil, w.fail(err)
			}
		}
	}
	if o.Latency > 0 {
		sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: o.Latency})
	}
	return w, nil
}

func (w *World) fail(err error) error {
	_ = w.Close()
	return fmt.Errorf("loadtest world: %w", err)
}

// Close stops the simulator.
func (w *World) Close() error {
	err := w.Sim.Close() // first: it releases hanging requests
	if w.srv != nil {
		w.srv.Close()
	}
	if w.tmp != "" {
		_ = os.RemoveAll(w.tmp)
	}
	return err
}

// InjectFaults makes each request fail with probability rate, split evenly
// over 5xx, connection resets, hangs (released after hang) and secondary
// rate limits. It returns the fault ids.
func (w *World) InjectFaults(rate float64, hang time.Duration) []int {
	kinds := []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang, githubsim.FaultSecondaryLimit}
	var ids []int
	for i, k := range kinds {
		// Each fault draws on its own, so later ones see only what earlier
		// ones let through: raise their odds to keep the shares equal.
		p := rate / float64(len(kinds)) / (1 - rate*float64(i)/float64(len(kinds)))
		ids = append(ids, w.Sim.AddFault(githubsim.Fault{Kind: k, Rate: p, Delay: hang}))
	}
	return ids
}

// ServerURL is the simulator as GITHUB_SERVER_URL: where the jobs push.
func (w *World) ServerURL() string { return strings.TrimSuffix(w.Base, "/") }

// Client builds a client for token the way the stages do (ghclient), with
// the fake clock for every wait and pacer for content-creating requests.
func (w *World) Client(token string, retryUnsafe bool, pacer *ghclient.Pacer) (*github.Client, error) {
	return ghclient.New(ghclient.Options{BaseURL: w.Base, Token: token, RetryUnsafe: retryUnsafe, Pacer: pacer,
		Sleep: w.Clock.Sleep, Now: w.Clock.Now, RequestTimeout: 20 * time.Second, Base: w.rt})
}

// Pusher pushes ledger updates with token through gh's transport, as
// cmd/dispatcher and cmd/runner publish wire theirs.
func (w *World) Pusher(gh *github.Client, token string) (*refpush.Client, error) {
	return refpush.ForAPI(gh, token)
}

// Pacer is a default pacer (GitHub's content-creation limits) on the fake clock.
func (w *World) Pacer() *ghclient.Pacer {
	return ghclient.NewPacer(0, 0, 0, w.Clock.Now, w.Clock.Sleep)
}

// ProcessPacer is the pacer of one process of the bot account: GitHub's limits
// on the fake clock and, with SharedBudget, the account's ledger reached
// with controlToken (ControlToken for the dispatcher, whose ledger writes
// are the bot's own; RunnerToken for publish jobs, whose are not). opts
// adjust the ledger's options (the dispatcher's, dispatch.LedgerOptions).
func (w *World) ProcessPacer(controlToken string, opts ...func(*writebudget.Options)) (*ghclient.Pacer, *writebudget.Ledger, error) {
	p := w.Pacer()
	if !w.SharedBudget {
		return p, nil, nil
	}
	ctl, err := w.Client(controlToken, true, nil)
	if err != nil {
		return nil, nil, err
	}
	w.procsMu.Lock()
	w.procs++
	holder := fmt.Sprintf("process-%d", w.procs)
	w.procsMu.Unlock()
	push, err := w.Pusher(ctl, controlToken)
	if err != nil {
		return nil, nil, err
	}
	// one push per update, written as the bot
	o := writebudget.Options{Client: ctl, Push: push, Repo: Control, Account: Bot, Holder: holder, SelfCost: writebudget.UpdateCost(push),
		Now: w.Clock.Now, Sleep: w.Clock.Sleep}
	if controlToken == RunnerToken {
		// publish: the workflow's token, and the bot's while that is refused
		if o.Fallback, err = w.Client(BotToken, true, nil); err != nil {
			return nil, nil, err
		}
		if o.FallbackPush, err = w.Pusher(o.Fallback, BotToken); err != nil {
			return nil, nil, err
		}
		o.SelfCost, o.FallbackCost = 0, writebudget.UpdateCost(o.FallbackPush)
	}
	for _, f := range opts {
		f(&o)
	}
	l, err := writebudget.New(o)
	if err != nil {
		return nil, nil, err
	}
	return p.Share(l), l, nil
}

// LedgerAtWindow brings the account's ledger where it is but for the
// first grant of each hour: at the generation named for the clock's window
// (writebudget's named generations; a new account's first ledger is
// generation 1, named at its next grant). Benchmarks start from there.
func (w *World) LedgerAtWindow(ctx context.Context) error {
	ctl, err := w.Client(ControlToken, true, nil)
	if err != nil {
		return err
	}
	push, err := w.Pusher(ctl, ControlToken)
	if err != nil {
		return err
	}
	l, err := writebudget.New(writebudget.Options{Client: ctl, Push: push, Repo: Control, Account: Bot, Holder: "loadtest",
		SelfCost: writebudget.UpdateCost(push), Block: 1, Now: w.Clock.Now, Sleep: w.Clock.Sleep})
	if err != nil {
		return err
	}
	for range 2 {
		if err := l.Take(ctx); err != nil {
			return err
		}
	}
	if r, _ := l.Rotations(); r != 1 {
		return fmt.Errorf("loadtest: the ledger was not named (%d rotations)", r)
	}
	return nil
}

// LiftAccountLimits commits limits far above GitHub's into the account's
// ledger: worlds where real processes (on the real clock) write, and the
// simulator enforces no content limits, are not paced in real time.
func (w *World) LiftAccountLimits(ctx context.Context) error {
	ctl, err := w.Client(ControlToken, true, nil)
	if err != nil {
		return err
	}
	push, err := w.Pusher(ctl, ControlToken)
	if err != nil {
		return err
	}
	l, err := writebudget.New(writebudget.Options{Client: ctl, Push: push, Repo: Control, Account: Bot, Holder: "loadtest",
		Now: w.Clock.Now, Sleep: w.Clock.Sleep})
	if err != nil {
		return err
	}
	return l.SetLimits(ctx, 1_000_000, 10_000_000)
}
