package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// publishEnv seeds a simulator with a thread, a trigger and a log issue,
// writes assemble's context and an agent run dir, and returns the env.
func publishEnv(t *testing.T) (map[string]string, *githubsim.Sim) {
	t.Helper()
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 1})
	for _, u := range []string{"acme", "ops", "alice", "mrbot"} {
		sim.AddUser(u)
	}
	sim.AddToken("tok-bot", "mrbot")
	for _, r := range []string{"acme/widgets", "ops/control"} {
		_, err := sim.AddRepo(r, false)
		require.NoError(t, err)
		sim.SetPermission(r, "mrbot", "write")
	}
	n, err := sim.CreateIssue("acme/widgets", "alice", "Bug", "broken")
	require.NoError(t, err)
	logIssue, err := sim.CreateIssue("ops/control", "mrbot", "log", "…")
	require.NoError(t, err)
	trigger, err := sim.Comment("acme/widgets", n, "alice", "@mrbot please look")
	require.NoError(t, err)

	dir := t.TempDir()
	ctxJSON, err := json.Marshal(map[string]any{"repository": map[string]any{"full_name": "acme/widgets"}, "issue": map[string]any{"number": n}, "trigger_comment": trigger})
	require.NoError(t, err)
	ctxFile := filepath.Join(dir, "assemble", "context.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(ctxFile), 0o755))
	require.NoError(t, os.WriteFile(ctxFile, ctxJSON, 0o644))
	sum := sha256.Sum256(ctxJSON)
	runDir := filepath.Join(dir, "runs", "run-1")
	require.NoError(t, os.MkdirAll(runDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(runDir, contract.OutcomeFile), []byte(`{"engine":"claude","status":"completed"}`), 0o644))
	q, err := outputs.OpenQueue(filepath.Join(runDir, contract.OutputsFile))
	require.NoError(t, err)
	_, err = q.Append(outputs.Entry{Kind: policy.KindComment, Repo: "acme/widgets", Number: n, Body: "Found it.", At: time.Now()})
	require.NoError(t, err)

	env := map[string]string{
		"BOT_LOGIN": "mrbot", "BOT_TOKEN": "tok-bot", "CONTROL_REPO": "ops/control",
		"GITHUB_API_URL": base, "GITHUB_SERVER_URL": strings.TrimSuffix(base, "/"),
		"GITHUB_REPOSITORY": "ops/control", "GITHUB_RUN_ID": "77",
		"MR_RUN_DIR": filepath.Join(dir, "runs"), "MR_CONTEXT_FILE": ctxFile,
		"MR_CONTEXT_SHA256": hex.EncodeToString(sum[:]), "MR_LOG_ISSUE": strconv.Itoa(logIssue),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"),
		// the 1 s gap between publish's writes is ghclient's pacer's to
		// test; here it would only make each run wait seconds
		"MR_WRITE_GAP": "0s",
	}
	return env, sim
}

func runPublishCmd(env map[string]string) (int, string, string) {
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := app.Main(ctx, &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}, []string{"publish"})
	return code, out.String(), errb.String()
}

func TestPublishCommand(t *testing.T) {
	t.Parallel()
	env, sim := publishEnv(t)
	code, out, errs := runPublishCmd(env)
	require.Equal(t, 0, code, "stderr: %s", errs)
	assert.Contains(t, out, ": completed; 1 written, 0 refused; run log ")
	summary, err := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	require.NoError(t, err)
	assert.Contains(t, string(summary), "Created Comments:\n- ")
	assert.Contains(t, string(summary), "/ops/control/actions/runs/77")
	var bot int
	for _, c := range sim.Comments("acme/widgets", 1) {
		if c.GetUser().GetLogin() == "mrbot" {
			bot++
		}
	}
	assert.Equal(t, 1, bot)
	assert.NotContains(t, out+errs, "tok-bot", "the token is never printed")
}

func TestPublishCommandRefuses(t *testing.T) {
	env, _ := publishEnv(t)
	tests := []struct {
		name    string
		change  map[string]string
		code    int
		errPart string
	}{
		{"no token", map[string]string{"BOT_TOKEN": ""}, 2, "BOT_TOKEN is required"},
		{"bad settings", map[string]string{"MR_LOG_ISSUE": "x"}, 2, "MR_LOG_ISSUE"},
		{"tampered context", map[string]string{"MR_CONTEXT_SHA256": strings.Repeat("ab", 32)}, 1, "changed after assemble"},
		{"unverifiable context", map[string]string{"MR_CONTEXT_SHA256": ""}, 1, "cannot be verified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range env {
				e[k] = v
			}
			for k, v := range tc.change {
				e[k] = v
			}
			code, _, errs := runPublishCmd(e)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, errs, tc.errPart)
		})
	}
}

// TestRunAttempt: publish skips reads only on a first attempt it is sure
// of; anything but a positive number reads as a re-run (0).
func TestRunAttempt(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "2": 2, " 3\n": 3, "": 0, "0": 0, "-1": 0, "1x": 0, "one": 0} {
		env := &cli.Env{Getenv: func(k string) string { return map[string]string{"GITHUB_RUN_ATTEMPT": in}[k] }}
		assert.Equal(t, want, runAttempt(env), "GITHUB_RUN_ATTEMPT=%q", in)
	}
}
