package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// runnerKills runs the assemble and publish jobs of every delivery as the
// real `runner` binary, SIGKILLs the first attempt of each at a random
// write (seeded: before or after the write is stored), and re-runs failed
// jobs as GitHub's "re-run failed jobs" does (same run id, next attempt).
type runnerKills struct {
	t      *testing.T
	w      *World
	bin    string
	rng    *rand.Rand
	dir    string
	tokens int

	m      Measures
	ready  map[string]map[string]bool // jobid → workflow runs that proceeded
	first  map[string]map[string]string
	kills  map[string][]int // stage → the write each landed SIGKILL hit
	clean  map[string]int   // stage → most writes of an attempt not killed
	tries  int              // processes started
	maxAt  int              // kills fall on write 1…maxAt of a process
	reruns int
}

// token is a new token of account login, for one process.
func (k *runnerKills) token(login string) string {
	k.tokens++
	tok := fmt.Sprintf("%s-proc-%d", login, k.tokens)
	k.w.Sim.AddToken(tok, login)
	return tok
}

// start runs one process of the runner; plan (nil = none) kills it.
func (k *runnerKills) start(ctx context.Context, dir string, env []string, args []string, plan *KillPlan) (killed bool, out string, err error) {
	stage := args[0]
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return false, "", err
	}
	k.tries++
	exited := make(chan struct{})
	fired := k.w.Kill(*plan, cmd.Process, exited)
	err = cmd.Wait()
	close(exited)
	killed, writes := fired()
	if killed {
		k.kills[stage] = append(k.kills[stage], writes)
	} else {
		k.clean[stage] = max(k.clean[stage], writes)
	}
	return killed, buf.String(), err
}

// plan draws where the first attempt of a job dies.
func (k *runnerKills) plan(tokens ...string) *KillPlan {
	return &KillPlan{At: 1 + k.rng.IntN(k.maxAt), AfterApply: k.rng.IntN(2) == 0, Tokens: tokens}
}

const runnerAttempts = 4

// assemble runs one workflow run's assemble job for d until it succeeds.
func (k *runnerKills) assemble(ctx context.Context, d githubsim.Dispatch, runID string) {
	dir := filepath.Join(k.dir, "run-"+runID)
	require.NoError(k.t, os.MkdirAll(dir, 0o755))
	ev, err := json.Marshal(map[string]any{"action": d.EventType, "client_payload": d.ClientPayload,
		"repository": map[string]any{"full_name": Control}})
	require.NoError(k.t, err)
	require.NoError(k.t, os.WriteFile(filepath.Join(dir, "event.json"), ev, 0o644))
	for a := 1; a <= runnerAttempts; a++ {
		out := filepath.Join(dir, "output-"+strconv.Itoa(a))
		require.NoError(k.t, os.WriteFile(out, nil, 0o644))
		tok := k.token(RunnerLogin)
		env := append(baseEnv(k.t, k.w), "GITHUB_TOKEN="+tok, "GITHUB_EVENT_PATH="+filepath.Join(dir, "event.json"), "GITHUB_OUTPUT="+out,
			"GITHUB_RUN_ID="+runID, "GITHUB_RUN_ATTEMPT="+strconv.Itoa(a), "MR_CONTEXT_FILE="+filepath.Join(dir, "runs", "context.json"),
			"MR_RUN_DIR="+filepath.Join(dir, "runs"))
		plan := &KillPlan{Tokens: []string{tok}} // re-runs: counted, not killed
		if a == 1 {
			plan = k.plan(tok)
		}
		killed, log, err := k.start(ctx, dir, env, []string{"assemble"}, plan)
		if err == nil {
			o, oerr := actions.ReadOutputs(out)
			require.NoError(k.t, oerr)
			if o["ready"] == "true" {
				if k.ready[o["jobid"]] == nil {
					k.ready[o["jobid"]] = map[string]bool{}
				}
				k.ready[o["jobid"]][runID] = true
				if k.first[o["jobid"]] == nil {
					o["dir"], o["attempt"] = dir, strconv.Itoa(a)
					k.first[o["jobid"]] = o
				}
			}
			return
		}
		if !killed {
			k.t.Logf("assemble run %s attempt %d failed: %v\n%s", runID, a, err, log)
		}
		k.reruns++
	}
	k.m.ManualReruns++
}

// publish runs the publish job of job until it succeeds; every attempt
// starts from the agent's run record as the artifact holds it.
func (k *runnerKills) publish(ctx context.Context, m Mention, o map[string]string) {
	// the run's later jobs start in the attempt its prepare job proceeded in
	first, err := strconv.Atoi(o["attempt"])
	require.NoError(k.t, err)
	for a := 1; a <= runnerAttempts; a++ {
		runs := filepath.Join(o["dir"], "publish-"+strconv.Itoa(a))
		runDir := filepath.Join(runs, "agent-1")
		require.NoError(k.t, WriteRun(runDir, m, k.w.Clock.Now()))
		bot, ctl := k.token(Bot), k.token(RunnerLogin)
		env := append(baseEnv(k.t, k.w), "BOT_TOKEN="+bot, "GITHUB_TOKEN="+ctl, "MR_RUN_DIR="+runs, "MR_RUN_ID=agent-1",
			"MR_CONTEXT_FILE="+filepath.Join(o["dir"], "runs", "context.json"), "MR_CONTEXT_SHA256="+o["context_sha256"],
			"MR_LOG_ISSUE="+o["log_issue"], "MR_LOG_ISSUE_NEW="+o["log_issue_new"], "MR_SHARDED="+o["sharded"], "MR_WRITE_GAP=0s", "MR_ENGINE=replay",
			"GITHUB_RUN_ID="+filepath.Base(o["dir"]), "GITHUB_RUN_ATTEMPT="+strconv.Itoa(first+a-1))
		plan := &KillPlan{Tokens: []string{bot, ctl}}
		if a == 1 {
			plan = k.plan(bot, ctl)
		}
		killed, log, err := k.start(ctx, runs, env, []string{"publish"}, plan)
		if err == nil {
			return
		}
		if !killed {
			k.t.Logf("publish of %s attempt %d failed: %v\n%s", m.JobID, a, err, log)
		}
		k.reruns++
	}
	k.m.ManualReruns++
}

func baseEnv(t *testing.T, w *World) []string {
	ids, err := w.ControlIDs()
	require.NoError(t, err)
	return append(os.Environ(), "BOT_LOGIN="+Bot, "CONTROL_REPO="+Control, "GITHUB_REPOSITORY="+Control,
		"GITHUB_REPOSITORY_ID="+strconv.FormatInt(ids.Repo, 10), "GITHUB_REPOSITORY_OWNER_ID="+strconv.FormatInt(ids.Owner, 10),
		"GITHUB_API_URL="+w.Base, "GITHUB_SERVER_URL="+w.ServerURL())
}

// proveRunnerKills: n mentions (every third sharded), every assemble and
// publish job's first attempt killed at a random write, then re-run.
func proveRunnerKills(t *testing.T, n int, seed uint64) (Measures, *runnerKills) {
	w, err := NewWorld(WorldOptions{Repos: 3, Seed: int64(seed), Start: time.Now().UTC()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	w.PadEvery = 3
	ms, err := w.SeedMentions(n, 0)
	require.NoError(t, err)
	ctx := proveCtx(t)
	_, err = w.DispatchAll(ctx, ms, 3, nil)
	require.NoError(t, err)
	bins := builtBinaries(t, ctx)
	require.NoError(t, w.LiftAccountLimits(ctx)) // no content limits here; real processes pace in real time
	k := &runnerKills{t: t, w: w, bin: bins.Runner, rng: rand.New(rand.NewPCG(seed, seed)), dir: t.TempDir(), maxAt: 8,
		ready: map[string]map[string]bool{}, first: map[string]map[string]string{}, kills: map[string][]int{}, clean: map[string]int{}}
	ds := w.Sim.Dispatches(Control)
	types := map[string]int{}
	for i, d := range ds {
		types[d.EventType]++
		k.assemble(ctx, d, strconv.Itoa(7000+i))
	}
	t.Logf("deliveries: %v", types)
	for _, m := range ms {
		if o := k.first[m.JobID]; o != nil {
			k.publish(ctx, m, o)
		}
	}
	p := newProveRun(w, ms)
	p.ready, p.m = k.ready, k.m
	// every job's writes are there too (exactly once is not "never")
	for _, m := range ms {
		got := 0
		for _, c := range w.Sim.Comments(m.Repo, m.Number) {
			if strings.EqualFold(c.GetUser().GetLogin(), Bot) && strings.Contains(c.GetBody(), "for job "+m.JobID) {
				got++
			}
		}
		assert.Equal(t, QueuedComments, got, "job %s: published comments", m.JobID)
	}
	return p.measure(), k
}

func TestProveRunnerKills(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes: skipped by -short")
	}
	t.Parallel() // its own world; mostly waiting on real processes
	n := 6
	if proveFull() {
		n = 30
	}
	m, k := proveRunnerKills(t, n, 17)
	for _, st := range []string{"assemble", "publish"} {
		t.Logf("%s: killed at writes %v; an attempt not killed made up to %d writes", st, k.kills[st], k.clean[st])
	}
	killed := len(k.kills["assemble"]) + len(k.kills["publish"])
	row := m.Row(fmt.Sprintf("%d mentions (1 in 3 sharded), %d SIGKILLs of real `runner assemble` (%d) and `runner publish` (%d) mid-write, each job re-run (%d processes)",
		n, killed, len(k.kills["assemble"]), len(k.kills["publish"]), k.tries))
	fmt.Println(row)
	t.Log(row)
	assert.Zero(t, m)
	assert.Greater(t, killed, n, "most first attempts die mid-write")
}
