package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/prebuilt"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// dispatcherBinary is the real command: make test's prebuilt one, or
// built here.
func dispatcherBinary(t *testing.T) string {
	t.Helper()
	if paths, ok, err := prebuilt.Commands("dispatcher"); err != nil {
		t.Fatal(err)
	} else if ok {
		return paths[0]
	}
	bin := filepath.Join(t.TempDir(), "dispatcher")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// proc is a running dispatcher whose log lines are kept.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  []string
	done chan error
}

func startProc(t *testing.T, bin string, vars map[string]string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			p.mu.Unlock()
		}
	}()
	go func() { <-scanned; p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-scanned
		if t.Failed() {
			t.Logf("dispatcher log:\n%s", strings.Join(p.lines(), "\n"))
		}
	})
	return p
}

// sigterm stops the process with SIGTERM and fails the test unless it
// exits 0 within wait.
func (p *proc) sigterm(t *testing.T, wait time.Duration) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "exits 0 on SIGTERM")
	case <-time.After(wait):
		t.Fatalf("no exit %s after SIGTERM", wait)
	}
}

func (p *proc) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// addr waits for the log line of msg and returns its addr.
func (p *proc) addr(t *testing.T, msg string) string {
	t.Helper()
	var addr string
	require.Eventually(t, func() bool {
		for _, l := range p.lines() {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(l), &rec) == nil && rec.Msg == msg {
				addr = rec.Addr
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "no %q line", msg)
	return "http://" + addr
}

func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sum adds the family's counters whose labels include want.
func sum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var n float64
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			n += m.GetCounter().GetValue()
		case m.Gauge != nil:
			n += m.GetGauge().GetValue()
		case m.Histogram != nil:
			n += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return n
}

// tokenFile writes tok into a file as a secret is mounted, newline ended.
func tokenFile(t *testing.T, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(p, []byte(tok+"\n"), 0o600))
	return p
}

// assertWrites checks the identity's writes in the hour: some used, and
// used and left adding up to GitHub's hourly limit; and that none of
// absent is shown.
func assertWrites(t *testing.T, fams map[string]*dto.MetricFamily, identity string, absent ...string) {
	t.Helper()
	id := map[string]string{"identity": identity}
	used, left := sum(fams, "mention_runner_writes_used", id), sum(fams, "mention_runner_writes_left", id)
	assert.Positive(t, used, "%s: writes used", identity)
	assert.Equal(t, float64(contract.ContentWritesPerHour), used+left, "%s: used + left = the hour's limit", identity)
	for _, a := range absent {
		assert.Zero(t, sum(fams, "mention_runner_writes_used", map[string]string{"identity": a})+
			sum(fams, "mention_runner_writes_left", map[string]string{"identity": a}), "%s: not an identity of its own", a)
	}
}

func healthz(base string) (int, string) {
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// serviceSim seeds n mentions of mrbot by alice, one issue each.
func serviceSim(t *testing.T, n int) (sim *githubsim.Sim, comments []int64, vars map[string]string) {
	t.Helper()
	var skew atomic.Int64
	sim, base := simfixture.Start(t, githubsim.Options{Logf: func(string, ...any) {}, Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	for _, u := range []string{"mrbot", "alice", "ops"} {
		sim.AddUser(u)
	}
	for _, r := range []string{"alice/proj", "ops/control"} {
		_, err := sim.AddRepo(r, false)
		require.NoError(t, err)
	}
	sim.SetPermission("ops/control", "mrbot", "write")
	sim.AddToken("tok", "mrbot")
	for i := range n {
		num, err := sim.CreateIssue("alice/proj", "alice", fmt.Sprintf("bug %d", i), "x")
		require.NoError(t, err)
		c, err := sim.Comment("alice/proj", num, "alice", "@mrbot fix it")
		require.NoError(t, err)
		comments = append(comments, c.GetID())
	}
	skew.Add(int64(time.Minute))
	vars = map[string]string{"BOT_LOGIN": "mrbot", "BOT_TOKEN": "tok", "CONTROL_REPO": "ops/control", "ALLOWED_USERS": "alice",
		"GITHUB_API_URL": base, "WRITE_GAP": "0s", "POLL_INTERVAL": "1s", "METRICS_ADDR": "127.0.0.1:0"}
	return sim, comments, vars
}

// TestPollMetricsAndHealth runs the real `dispatcher poll` against the
// simulator, its token read from a file: after n mentions /metrics counts
// n dispatched and n claim-to-dispatch latencies although the first
// dispatch's answer was lost after GitHub stored it (the retry is one
// dispatch, not two), and the bot's writes of the hour (the only
// identity: one token), /healthz is healthy, and it turns unhealthy once
// the simulator stops answering. SIGTERM then stops it cleanly.
func TestPollMetricsAndHealth(t *testing.T) {
	t.Parallel()
	const n = 3
	sim, _, vars := serviceSim(t, n)
	delete(vars, "BOT_TOKEN")
	vars["BOT_TOKEN_FILE"] = tokenFile(t, "tok")
	sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/repos/*/*/dispatches", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true})
	p := startProc(t, dispatcherBinary(t), vars, "poll")
	base := p.addr(t, "serving health and metrics")

	require.Eventually(t, func() bool {
		// the cycle's end (its rate-state write) comes after its triggers
		fams := scrape(t, base)
		return sum(fams, "mention_runner_mentions_total", map[string]string{"decision": "dispatch"}) >= n &&
			sum(fams, "mention_runner_poll_cycle_seconds", nil) >= 1
	}, time.Minute, 50*time.Millisecond)
	require.Eventually(t, func() bool { c, _ := healthz(base); return c == http.StatusOK }, 30*time.Second, 50*time.Millisecond)
	fams := scrape(t, base)
	assert.Equal(t, float64(n), sum(fams, "mention_runner_mentions_total", map[string]string{"decision": "dispatch"}))
	assert.Equal(t, float64(n), sum(fams, "mention_runner_mentions_seen_total", map[string]string{"mode": "poll"}))
	assert.GreaterOrEqual(t, sum(fams, "mention_runner_errors_total", map[string]string{"kind": "github_5xx"}), 1.0, "the lost answer is counted as an error")
	assert.GreaterOrEqual(t, sum(fams, "mention_runner_poll_cycle_seconds", nil), 1.0)
	assert.Equal(t, float64(n), sum(fams, "mention_runner_claim_to_dispatch_seconds", nil), "one latency per mention, the retried send's too")
	assert.GreaterOrEqual(t, len(sim.Dispatches("ops/control")), n)
	assertWrites(t, fams, "bot", "control")

	require.NoError(t, sim.Close())
	require.Eventually(t, func() bool { c, _ := healthz(base); return c == http.StatusServiceUnavailable }, 30*time.Second, 50*time.Millisecond)
	_, body := healthz(base)
	assert.Contains(t, body, "control repo")

	p.sigterm(t, 30*time.Second)
}

// TestServeMetricsAndHealth runs the real `dispatcher serve` with a
// CONTROL_TOKEN of another account, read from a file: n signed deliveries
// and one redelivery count n dispatched, n latencies and one ignored, the
// bot's and the control identity's writes of the hour each add up to the
// limit, the webhook listener's /healthz is healthy and turns unhealthy
// once the simulator stops answering, and SIGTERM stops it cleanly.
func TestServeMetricsAndHealth(t *testing.T) {
	t.Parallel()
	const n = 3
	sim, comments, vars := serviceSim(t, n)
	vars["WEBHOOK_SECRET"] = "s3cret"
	// the control repo's bookkeeping as an identity of its own, its token
	// in a file as a mounted secret
	sim.AddToken("ctl-tok", "ops")
	vars["CONTROL_TOKEN_FILE"] = tokenFile(t, "ctl-tok")
	p := startProc(t, dispatcherBinary(t), vars, "serve", "--addr", "127.0.0.1:0")
	hook := p.addr(t, "serving webhooks")
	base := p.addr(t, "serving health and metrics")
	require.Eventually(t, func() bool { c, _ := healthz(hook); return c == http.StatusOK }, 30*time.Second, 50*time.Millisecond)

	deliver := func(id int64) {
		body, err := sim.CommentEvent("alice/proj", id)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, hook+"/webhook", strings.NewReader(string(body)))
		require.NoError(t, err)
		req.Header.Set("X-GitHub-Event", "issue_comment")
		req.Header.Set("X-Hub-Signature-256", webhook.Sign([]byte("s3cret"), body))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
	}
	for _, id := range comments {
		deliver(id)
	}
	deliver(comments[0]) // GitHub redelivers

	fams := scrape(t, base)
	assert.Equal(t, float64(n), sum(fams, "mention_runner_mentions_total", map[string]string{"decision": "dispatch"}))
	assert.Equal(t, 1.0, sum(fams, "mention_runner_mentions_total", map[string]string{"decision": "ignore"}))
	assert.Equal(t, float64(n+1), sum(fams, "mention_runner_mentions_seen_total", map[string]string{"mode": "serve"}))
	assert.Equal(t, float64(n), sum(fams, "mention_runner_claim_to_dispatch_seconds", nil))
	assert.Len(t, sim.Dispatches("ops/control"), n)
	assertWrites(t, fams, "bot")
	assertWrites(t, fams, "control")

	require.NoError(t, sim.Close())
	require.Eventually(t, func() bool { c, _ := healthz(hook); return c == http.StatusServiceUnavailable }, 30*time.Second, 50*time.Millisecond)

	p.sigterm(t, 30*time.Second)
}

// TestPollSIGTERMMidCycle stops the real `dispatcher poll` with SIGTERM
// while its first cycle dispatches (each dispatch answered slowly): the
// cycle runs to its end, the process exits 0, and a restarted dispatcher
// finds nothing left, so every mention is dispatched exactly once.
func TestPollSIGTERMMidCycle(t *testing.T) {
	t.Parallel()
	const n = 6
	sim, _, vars := serviceSim(t, n)
	delete(vars, "METRICS_ADDR")
	sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/repos/*/*/dispatches", Kind: githubsim.FaultSlow, Rate: 1, Delay: 200 * time.Millisecond})
	bin := dispatcherBinary(t)
	p := startProc(t, bin, vars, "poll")
	require.Eventually(t, func() bool {
		for _, l := range p.lines() {
			if strings.Contains(l, `"msg":"trigger"`) {
				return true
			}
		}
		return false
	}, time.Minute, 5*time.Millisecond)
	p.sigterm(t, time.Minute)
	assert.Less(t, len(sim.Dispatches("ops/control")), n+1)

	again := startProc(t, bin, vars, "once")
	require.NoError(t, <-again.done)
	jobs := map[string]int{}
	for _, d := range sim.Dispatches("ops/control") {
		var v map[string]any
		require.NoError(t, json.Unmarshal(d.ClientPayload, &v))
		jobs[fmt.Sprint(v["job_id"], v["jobid"], v["url"])]++
	}
	assert.Len(t, sim.Dispatches("ops/control"), n, "each mention once")
	for j, c := range jobs {
		assert.Equal(t, 1, c, j)
	}
}
