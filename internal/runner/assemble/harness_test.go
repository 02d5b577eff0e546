package assemble

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const (
	control = "acme/control"
	bot     = "mr-bot"
)

type harness struct {
	sim   *githubsim.Sim
	clock *fakeclock.Clock
	base  string
	dir   string
	runID atomic.Int64
	// rt carries the runs' requests: without a socket (newHarnessInMemory)
	// or to base's listener, whatever host they name (toSim)
	rt http.RoundTripper
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	clk := fakeclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base := simfixture.Start(t, githubsim.Options{Now: clk.Now})
	return seedHarness(t, clk, sim, base, nil)
}

// newHarnessInMemory is newHarness served without a socket
// (simfixture.InMemory), for a testing/synctest bubble: round trips are
// counted on the bubble's clock, whatever the machine's load.
func newHarnessInMemory(t testing.TB) *harness {
	t.Helper()
	clk := fakeclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base, rt := simfixture.InMemory(t, githubsim.Options{Now: clk.Now})
	return seedHarness(t, clk, sim, base, rt)
}

func seedHarness(t testing.TB, clk *fakeclock.Clock, sim *githubsim.Sim, base string, rt http.RoundTripper) *harness {
	t.Helper()
	sim.AddOrg("acme")
	sim.AddUser("mr-runner")
	_, err := sim.AddRepo(control, true)
	require.NoError(t, err)
	sim.SetPermission(control, "mr-runner", "write")
	if rt == nil {
		u, err := url.Parse(base)
		require.NoError(t, err)
		rt = toSim{host: u.Host, next: http.DefaultTransport}
	}
	h := &harness{sim: sim, clock: clk, base: base, dir: t.TempDir(), rt: rt}
	h.runID.Store(1000)
	return h
}

// toSim sends every request to the simulator's listener at host: the
// runs' GITHUB_SERVER_URL stays https://github.com (the links the golden
// files hold) while their pushes, sent there, reach the simulator.
type toSim struct {
	host string
	next http.RoundTripper
}

func (s toSim) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.URL.Scheme, r2.URL.Host, r2.Host = "http", s.host, ""
	return s.next.RoundTrip(r2)
}

// shardedJob is a context for node that needs three shards, its job id
// and the events that dispatch it.
func shardedJob(t testing.TB, node string) (c []byte, jobID string, ev [][]byte) {
	t.Helper()
	c = contextFor(node, 120_000)
	jobID = transport.JobID(node)
	return c, jobID, events(t, jobID, c)
}

// contextFor builds a context whose trigger comment mentions the bot;
// pad adds a diff of that many bytes so it needs shards.
func contextFor(nodeID string, pad int) []byte {
	r := rand.New(rand.NewPCG(uint64(len(nodeID)), uint64(pad)))
	diff := make([]byte, pad)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 +-\n"
	for i := range diff {
		diff[i] = alphabet[r.IntN(len(alphabet))]
	}
	ctx := map[string]any{
		"repository": map[string]any{"full_name": "alice/app", "html_url": "https://github.com/alice/app"},
		"issue":      map[string]any{"number": 7, "title": "It breaks", "html_url": "https://github.com/alice/app/issues/7"},
		"comments":   []any{},
		"trigger_comment": map[string]any{
			"id": 42, "node_id": nodeID, "html_url": "https://github.com/alice/app/issues/7#issuecomment-42",
			"body": "@" + bot + " !cfg comment-only\nplease look", "user": map[string]any{"login": "alice"},
			"created_at": "2025-03-01T11:58:00Z",
		},
		"diff":       string(diff),
		"truncation": map[string]any{},
	}
	out, err := json.Marshal(ctx)
	if err != nil {
		panic(err)
	}
	return out
}

// events encodes a context into repository_dispatch webhook events.
func events(t testing.TB, jobID string, context []byte) [][]byte {
	t.Helper()
	reqs, err := transport.Encode(jobID, context, time.Date(2025, 3, 1, 11, 59, 0, 0, time.UTC))
	require.NoError(t, err)
	var out [][]byte
	for _, r := range reqs {
		out = append(out, webhook(t, r.EventType, r.ClientPayload))
	}
	return out
}

func webhook(t testing.TB, eventType string, payload any) []byte {
	t.Helper()
	ev, err := json.MarshalIndent(map[string]any{
		"action": eventType, "client_payload": payload,
		"repository": map[string]any{"full_name": control}, "sender": map[string]any{"login": bot},
	}, "", "  ")
	require.NoError(t, err)
	return ev
}

// outcome is one simulated workflow run.
type outcome struct {
	res     *Result
	err     error
	outputs map[string]string
	log     string
	dir     string
	runID   string
}

type runOpt func(env map[string]string)

// run performs one workflow run on event, as its own runner machine.
func (h *harness) run(t testing.TB, event []byte, opts ...runOpt) outcome {
	t.Helper()
	id := fmt.Sprint(h.runID.Add(1))
	dir := filepath.Join(h.dir, "run-"+id)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "event.json"), event, 0o644))
	env := map[string]string{
		"BOT_LOGIN": bot, "CONTROL_REPO": control, "GITHUB_API_URL": h.base, "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_TOKEN": "tok-" + id, "GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"), "GITHUB_OUTPUT": filepath.Join(dir, "output"),
		"GITHUB_RUN_ID": id, "GITHUB_RUN_ATTEMPT": "1", "GITHUB_REPOSITORY": control,
		"MR_CONTEXT_FILE": filepath.Join(dir, "runs", "context.json"),
	}
	for _, o := range opts {
		o(env)
	}
	h.sim.AddToken("tok-"+id, "mr-runner") // a token per run, to tell its requests apart
	require.NoError(t, os.WriteFile(env["GITHUB_OUTPUT"], nil, 0o644))
	var log strings.Builder
	var mu sync.Mutex
	seed := uint64(1)
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(seed, seed+1)) }
	switch v, ok := env[seedKey]; {
	case v == byJob:
		rng = func() *rand.Rand { return nil }
	case ok:
		_, err := fmt.Sscan(v, &seed)
		require.NoError(t, err)
	}
	res, err := Run(context.Background(), Options{
		Getenv: func(k string) string { return env[k] },
		Stdout: writerFunc(func(p []byte) { mu.Lock(); log.Write(p); mu.Unlock() }),
		Now:    h.clock.Now,
		Rand:   rng(),
		Client: func(o *ghclient.Options) { o.MaxRetries, o.Base = -1, h.rt },
	})
	outs, oerr := actions.ReadOutputs(env["GITHUB_OUTPUT"])
	require.NoError(t, oerr)
	return outcome{res: res, err: err, outputs: outs, log: log.String(), dir: dir, runID: env["GITHUB_RUN_ID"]}
}

// rerun repeats a run's workflow run (same run id, next attempt).
func rerun(o outcome) runOpt {
	return func(env map[string]string) { env["GITHUB_RUN_ID"], env["GITHUB_RUN_ATTEMPT"] = o.runID, "2" }
}

func withEnv(k, v string) runOpt { return func(env map[string]string) { env[k] = v } }

// seedKey, in a run's environment, seeds its Options.Rand (withSeed);
// the default is 1.
const seedKey = "test:rand-seed"

func withSeed(seed uint64) runOpt { return withEnv(seedKey, fmt.Sprint(seed)) }

// byJob, as a run's seed, leaves Options.Rand nil: the run draws its
// sweeps from its job's id, as in production.
const byJob = "job"

func drawnByJob() runOpt { return withEnv(seedKey, byJob) }

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func webhookRaw(t testing.TB, eventType string, payload map[string]any) []byte {
	return webhook(t, eventType, payload)
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
