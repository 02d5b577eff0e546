package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const (
	bot      = "mrbot"
	control  = "ops/control"
	proj     = "alice/proj"
	botToken = "bot-token"
)

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is a started simulator with the bot, a target repo alice/proj and
// the control repo ops/control, plus a dispatcher wired to it.
type env struct {
	t    *testing.T
	sim  *githubsim.Sim
	base string
	gh   *github.Client
	dsp  *github.Client
	logs *syncBuffer
	cfg  Config
	skew *atomic.Int64 // how far newEnv's simulator clock is ahead of the wall clock
	// rt serves requests without a socket (newEnvInMemory); nil = base's listener
	rt http.RoundTripper
}

// newEnv's simulator runs on the wall clock, moved ahead by later.
func newEnv(t *testing.T) *env {
	t.Helper()
	skew := &atomic.Int64{}
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := newEnvAt(t, now)
	e.skew, e.cfg.Now = skew, now
	return e
}

// later moves GitHub's clock on by d: the time between a mention and the
// poll cycle that finds it, which marks a thread read only when its last
// update is a moment older than the listing.
func (e *env) later(d time.Duration) {
	require.NotNil(e.t, e.skew, "later needs newEnv's clock")
	e.skew.Add(int64(d))
}

// newEnvAt is newEnv with the simulator's clock (nil = the wall clock).
func newEnvAt(t *testing.T, now func() time.Time) *env {
	t.Helper()
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 1, Logf: t.Logf, Now: now})
	return seedEnv(t, sim, base, nil)
}

// newEnvInMemory is newEnv served without a socket (simfixture.InMemory),
// for a testing/synctest bubble: round trips are counted on the bubble's
// clock, whatever the machine's load.
func newEnvInMemory(t *testing.T) *env {
	t.Helper()
	sim, base, rt := simfixture.InMemory(t, githubsim.Options{Seed: 1, Logf: t.Logf})
	return seedEnv(t, sim, base, rt)
}

func seedEnv(t *testing.T, sim *githubsim.Sim, base string, rt http.RoundTripper) *env {
	t.Helper()
	for _, u := range []string{bot, "alice", "bob", "carol", "ops"} {
		sim.AddUser(u)
	}
	sim.AddOrg("acme", "olga")
	sim.AddOrgMember("acme", bot, "member") // GitHub shows roles only to members
	for _, r := range []string{proj, control, "acme/tool"} {
		_, err := sim.AddRepo(r, false)
		require.NoError(t, err)
	}
	sim.SetPermission(control, bot, "write")
	sim.AddToken(botToken, bot)
	e := &env{t: t, sim: sim, base: base, logs: &syncBuffer{}, rt: rt}
	e.gh = e.client(false)
	e.dsp = e.client(true)
	e.cfg = Config{Bot: bot, Control: control, Allowed: ParseAllowList("alice, bob,olga"),
		Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}
	return e
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func (e *env) client(unsafe bool) *github.Client {
	return e.pacedClient(unsafe, nil)
}

// ledgerOptions are LedgerOptions as cmd/dispatcher wires them: the
// control client, and each update pushed with its token.
func (e *env) ledgerOptions() writebudget.Options {
	c := e.client(true)
	push, err := refpush.ForAPI(c, botToken)
	require.NoError(e.t, err)
	return LedgerOptions(c, push, control, bot)
}

// pacedClient is client with a pacer for its writes.
func (e *env) pacedClient(unsafe bool, p *ghclient.Pacer) *github.Client {
	o := ghclient.Options{BaseURL: e.base, Token: botToken, Sleep: noSleep, MaxRetries: 2,
		RetryUnsafe: unsafe, RequestTimeout: 20 * time.Second, Pacer: p, Base: e.rt}
	c, err := ghclient.New(o)
	require.NoError(e.t, err)
	return c
}

// wiredDispatcher is a dispatcher process wired as cmd/dispatcher wires
// one: its clients share one pacer, and every write also takes a slot of
// the account's ledger in CONTROL (writebudget, LedgerOptions). Pacing
// and grants run on clk (writes a second apart move it on).
func (e *env) wiredDispatcher(clk *fakeclock.Clock, mut ...func(*Config)) *Dispatcher {
	return e.wiredDispatcherRetry(clk, true, mut...)
}

// wiredDispatcherRetry is wiredDispatcher whose control client retries
// POST/PATCH (RetryUnsafe) only with retry, as cmd/dispatcher's does.
func (e *env) wiredDispatcherRetry(clk *fakeclock.Clock, retry bool, mut ...func(*Config)) *Dispatcher {
	o := e.ledgerOptions()
	o.Now, o.Sleep = clk.Now, clk.Sleep
	l, err := writebudget.New(o)
	require.NoError(e.t, err)
	p := ghclient.NewPacer(0, 0, 0, clk.Now, clk.Sleep).Share(l)
	cfg := e.cfg
	for _, m := range mut {
		m(&cfg)
	}
	d, err := New(cfg, Clients{GitHub: e.pacedClient(false, p), Control: e.pacedClient(retry, p), Dispatch: e.pacedClient(true, p), Budget: l})
	require.NoError(e.t, err)
	return d
}

// ledgerAtWindow brings the account's ledger where it is but for the
// first grant of each hour: at the generation named for clk's window
// (writebudget's named generations). An account's first ledger is
// generation 1, named at its next grant: two grants of one slot.
func (e *env) ledgerAtWindow(clk *fakeclock.Clock) {
	o := e.ledgerOptions()
	o.Now, o.Sleep, o.Block, o.MaxBlock = clk.Now, clk.Sleep, 1, 1
	l, err := writebudget.New(o)
	require.NoError(e.t, err)
	for range 2 {
		require.NoError(e.t, l.Take(e.ctx()))
	}
	rotations, _ := l.Rotations()
	require.Equal(e.t, 1, rotations, "generation 1 named")
	l.Idle() // what the grant left goes on in the background: not into the caller's requests
}

func (e *env) dispatcher(mut ...func(*Config)) *Dispatcher {
	cfg := e.cfg
	for _, m := range mut {
		m(&cfg)
	}
	d, err := New(cfg, Clients{GitHub: e.gh, Dispatch: e.dsp})
	require.NoError(e.t, err)
	return d
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	e.t.Cleanup(cancel)
	return ctx
}

func (e *env) raw(path string) json.RawMessage {
	raw, err := threadctx.GetObject(e.ctx(), e.gh, path)
	require.NoError(e.t, err)
	return raw
}

// issue opens an issue in proj by alice.
func (e *env) issue(body string) int {
	n, err := e.sim.CreateIssue(proj, "alice", "a bug", body)
	require.NoError(e.t, err)
	return n
}

func (e *env) pr(body, diff string) int {
	n, err := e.sim.CreatePR(proj, "alice", "a change", body, "feature", "main", diff)
	require.NoError(e.t, err)
	return n
}

func (e *env) comment(number int, author, body string) *github.IssueComment {
	c, err := e.sim.Comment(proj, number, author, body)
	require.NoError(e.t, err)
	return c
}

// delivery builds a webhook body as GitHub would send it, from the
// simulator's own API objects.
func (e *env) delivery(event string, number int, itemID int64) []byte {
	p := map[string]any{"repository": e.raw("repos/" + proj)}
	issue := e.raw(fmt.Sprintf("repos/%s/issues/%d", proj, number))
	switch event {
	case "issue_comment":
		p["action"], p["issue"] = "created", issue
		p["comment"] = e.raw(fmt.Sprintf("repos/%s/issues/comments/%d", proj, itemID))
	case "issues":
		p["action"], p["issue"] = "opened", issue
	case "pull_request":
		p["action"], p["pull_request"] = "opened", e.raw(fmt.Sprintf("repos/%s/pulls/%d", proj, number))
	case "pull_request_review", "pull_request_review_comment":
		p["pull_request"] = e.raw(fmt.Sprintf("repos/%s/pulls/%d", proj, number))
		path, key, action := "reviews", "review", "submitted"
		if event == "pull_request_review_comment" {
			path, key, action = "comments", "comment", "created"
		}
		list, err := threadctx.GetAll(e.ctx(), e.gh, fmt.Sprintf("repos/%s/pulls/%d/%s", proj, number, path))
		require.NoError(e.t, err)
		for _, raw := range list {
			var it struct{ ID int64 }
			require.NoError(e.t, json.Unmarshal(raw, &it))
			if it.ID == itemID {
				p[key] = raw
			}
		}
		require.Contains(e.t, p, key)
		p["action"] = action
	}
	b, err := json.Marshal(p)
	require.NoError(e.t, err)
	return b
}

func (e *env) trigger(event string, number int, itemID int64) *Trigger {
	t, err := DecodeEvent(event, e.delivery(event, number, itemID))
	require.NoError(e.t, err)
	return t
}

// contexts reassembles every job dispatched to CONTROL.
func (e *env) contexts() map[string]map[string]json.RawMessage {
	out := map[string]map[string]json.RawMessage{}
	for id, raw := range e.rawContexts() {
		var m map[string]json.RawMessage
		require.NoError(e.t, json.Unmarshal(raw, &m))
		out[id] = m
	}
	return out
}

// rawContexts reassembles every job dispatched to CONTROL, as bytes.
func (e *env) rawContexts() map[string][]byte {
	byJob := map[string]*transport.Assembler{}
	for _, d := range e.sim.Dispatches(control) {
		var p transport.Payload
		require.NoError(e.t, json.Unmarshal(d.ClientPayload, &p))
		a := byJob[p.JobID]
		if a == nil {
			a = transport.NewAssembler(transport.Options{})
			byJob[p.JobID] = a
		}
		_, err := a.Add(d.EventType, p)
		require.NoError(e.t, err)
	}
	out := map[string][]byte{}
	for id, a := range byJob {
		raw, err := a.Context()
		require.NoError(e.t, err)
		out[id] = raw
	}
	return out
}

// requestsExcept counts logged API requests, leaving out dispatches.
func (e *env) requestsExcept(skip string) []string {
	var out []string
	for _, r := range e.sim.Requests() {
		line := r.Method + " " + r.Path
		if !strings.HasSuffix(r.Path, skip) {
			out = append(out, line)
		}
	}
	return out
}
