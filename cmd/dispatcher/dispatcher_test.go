package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

func run(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := app.Main(ctx, env, args)
	return code, out.String(), errb.String()
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want []string
	}{
		{"all missing", nil, []string{"once"}, []string{"BOT_LOGIN (--bot)", "ALLOWED_USERS (--allowed-users)", "BOT_TOKEN (--token)", "CONTROL_REPO (--control)"}},
		{"serve needs a secret", map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*"}, []string{"serve"}, []string{"WEBHOOK_SECRET (--webhook-secret)"}},
		{"unknown flag", nil, []string{"once", "--frob"}, []string{"flag provided but not defined: -frob"}},
		{"bad number", map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*", "RATE_LIMIT_PER_HOUR": "ten"}, []string{"once"}, []string{`RATE_LIMIT_PER_HOUR="ten"`}},
		{"event needs name", nil, []string{"event"}, []string{"--name and --payload are required"}},
		{"bad ceilings", map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*", "COMMENT_LIMIT": "-1", "ISSUE_LIMIT": "one", "PR_LIMIT": "1001"}, []string{"once"},
			[]string{`COMMENT_LIMIT="-1": want a whole number 0…1000`, `ISSUE_LIMIT="one"`, `PR_LIMIT="1001"`}},
		{"bad write gap", map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*", "WRITE_GAP": "-1s"}, []string{"once", "--write-gap", "2m"},
			[]string{`WRITE_GAP="2m": want a duration from 0s to 1m`}},
		{"negative write gap", map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*", "WRITE_GAP": "-1s"}, []string{"once"},
			[]string{`WRITE_GAP="-1s"`}},
		{"bad ceiling flag", map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*"}, []string{"once", "--pr-limit", "2000"}, []string{`PR_LIMIT="2000"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := run(t, tc.vars, tc.args...)
			assert.Equal(t, 2, code)
			for _, w := range tc.want {
				assert.Contains(t, errs, w)
			}
		})
	}
}

func TestEventDryRun(t *testing.T) {
	raw, err := os.ReadFile("../../internal/dispatcher/webhook/testdata/examples/issue_comment.created.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	m["comment"].(map[string]any)["body"] = "@mrbot !cfg no-pr\nplease"
	raw, err = json.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "event.json")
	require.NoError(t, os.WriteFile(path, raw, 0o600))

	// The empty --allowed-users is set: no one may trigger.
	code, out, errs := run(t, map[string]string{"BOT_LOGIN": "mrbot"}, "event", "--name", "issue_comment", "--payload", path, "--dry-run", "--allowed-users=")
	require.Equal(t, 0, code, errs)
	var d dispatch.Decision
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	assert.Equal(t, dispatch.Ignore, d.Decision)

	code, out, errs = run(t, map[string]string{"BOT_LOGIN": "mrbot", "ALLOWED_USERS": "codertocat"}, "event", "--name", "issue_comment", "--payload", path, "--dry-run")
	require.Equal(t, 0, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	assert.Equal(t, dispatch.Dispatch, d.Decision)
	assert.Equal(t, "Codertocat/Hello-World", d.Trigger.Repo)
	assert.Equal(t, 0, d.Policy.PRLimit)
	assert.Contains(t, errs, `"decision":"dispatch"`, "structured log on stderr")

	code, out, _ = run(t, map[string]string{"BOT_LOGIN": "mrbot", "ALLOWED_USERS": "*"}, "event", "--name", "ping", "--payload", path, "--dry-run")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"decision":"ignore"`)
}

// TestCeilingsInDecision: the operator ceilings from the environment or
// flags bound the policy the dispatcher reports, defaults 3/1/1.
func TestCeilingsInDecision(t *testing.T) {
	raw, err := os.ReadFile("../../internal/dispatcher/webhook/testdata/examples/issue_comment.created.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	m["comment"].(map[string]any)["body"] = "@mrbot !cfg issue-limit=4\nplease"
	raw, err = json.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "event.json")
	require.NoError(t, os.WriteFile(path, raw, 0o600))

	cases := []struct {
		name                    string
		vars                    map[string]string
		args                    []string
		comments, issues, pulls int
	}{
		{"defaults", nil, nil, 3, 1, 1},
		{"environment", map[string]string{"COMMENT_LIMIT": "7", "ISSUE_LIMIT": "10", "PR_LIMIT": "0"}, nil, 7, 4, 0},
		{"flags win", map[string]string{"COMMENT_LIMIT": "7"}, []string{"--comment-limit", "2", "--issue-limit=0"}, 2, 0, 1},
		{"zero is zero", map[string]string{"COMMENT_LIMIT": "0", "ISSUE_LIMIT": "0", "PR_LIMIT": "0"}, nil, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{"BOT_LOGIN": "mrbot", "ALLOWED_USERS": "*"}
			for k, v := range tc.vars {
				vars[k] = v
			}
			args := append([]string{"event", "--name", "issue_comment", "--payload", path, "--dry-run"}, tc.args...)
			code, out, errs := run(t, vars, args...)
			require.Equal(t, 0, code, errs)
			var d dispatch.Decision
			require.NoError(t, json.Unmarshal([]byte(out), &d))
			require.Equal(t, dispatch.Dispatch, d.Decision, d.Reason)
			require.NotNil(t, d.Policy)
			assert.Equal(t, tc.comments, d.Policy.CommentLimit)
			assert.Equal(t, tc.issues, d.Policy.IssueLimit)
			assert.Equal(t, tc.pulls, d.Policy.PRLimit)
		})
	}
}

// TestOnceAgainstSimulator runs the real command against the simulator.
func TestOnceAgainstSimulator(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64 // GitHub's clock, ahead of the wall clock by the time between mention and poll
	sim, base := simfixture.Start(t, githubsim.Options{Logf: t.Logf, Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	for _, u := range []string{"mrbot", "alice", "ops"} {
		sim.AddUser(u)
	}
	for _, r := range []string{"alice/proj", "ops/control"} {
		_, err := sim.AddRepo(r, false)
		require.NoError(t, err)
	}
	sim.SetPermission("ops/control", "mrbot", "write")
	sim.AddToken("tok", "mrbot")
	n, err := sim.CreateIssue("alice/proj", "alice", "bug", "x")
	require.NoError(t, err)
	_, err = sim.Comment("alice/proj", n, "alice", "@mrbot fix it")
	require.NoError(t, err)
	skew.Add(int64(time.Minute)) // the next scheduled run
	// WRITE_GAP=0s: pacing is TestWriteGapSetting's and ghclient's; here
	// the 1 s gap between writes would only make the test wait seconds.
	vars := map[string]string{"BOT_LOGIN": "mrbot", "BOT_TOKEN": "tok", "CONTROL_REPO": "ops/control", "ALLOWED_USERS": "alice", "GITHUB_API_URL": base,
		"WRITE_GAP": "0s"}
	code, out, errs := run(t, vars, "once")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"decision":"dispatch"`)
	assert.Len(t, sim.Dispatches("ops/control"), 1)
	code, out, errs = run(t, vars, "once")
	require.Equal(t, 0, code, errs)
	assert.Empty(t, out, "thread was marked read")
}

func TestServeStopsOnCancel(t *testing.T) {
	var out, errb bytes.Buffer
	vars := map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*", "WEBHOOK_SECRET": "s"}
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := app.Main(ctx, env, []string{"serve", "--addr", "127.0.0.1:0"})
	assert.Equal(t, 0, code, errb.String())
	assert.Contains(t, errb.String(), "serving webhooks")
}

// TestWriteGapSetting: the pacer's least gap between the bot's writes is
// 1 s unless WRITE_GAP (or --write-gap) says otherwise; 0s turns it off.
func TestWriteGapSetting(t *testing.T) {
	base := map[string]string{"BOT_LOGIN": "b", "BOT_TOKEN": "t", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*"}
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want time.Duration
	}{
		{"default", "", nil, time.Second},
		{"env off", "0s", nil, 0},
		{"flag wins", "0s", []string{"--write-gap", "250ms"}, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := maps.Clone(base)
			if tc.env != "" {
				vars["WRITE_GAP"] = tc.env
			}
			c, err := resolveWith(t, vars, tc.args...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.writeGap)
		})
	}
}

// resolveWith resolves the settings of `once` from vars and args.
func resolveWith(t *testing.T, vars map[string]string, args ...string) (*conf, error) {
	t.Helper()
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return vars[k] }}
	fs := cli.FlagSet(env, "dispatcher", "once", "[flags]")
	f := addSettings(fs)
	require.NoError(t, cli.ParseFlags(fs, args, false))
	return f.resolve(env, "once", false)
}
