package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

const agentTestContext = `{"repository":{"full_name":"octo/hello"},"issue":{"number":5},
"trigger_comment":{"id":9,"node_id":"IC_9","html_url":"https://github.com/octo/hello/issues/5#issuecomment-9",
"body":"@helperbot say hi","user":{"login":"alice"},"created_at":"2026-01-01T00:00:00Z"}}`

func agentTestEnv(t *testing.T, claudeScript string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	ctxPath := filepath.Join(dir, "context.json")
	require.NoError(t, os.WriteFile(ctxPath, []byte(agentTestContext), 0o644))
	bin := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"+claudeScript+"\n"), 0o755))
	sum := sha256.Sum256([]byte(agentTestContext))
	outFile := filepath.Join(dir, "github_output")
	return map[string]string{
		"BOT_LOGIN": "helperbot", "CONTROL_REPO": "octo/control", "MR_RUN_DIR": filepath.Join(dir, "runs"),
		"MR_CONTEXT_FILE": ctxPath, "MR_CONTEXT_SHA256": hex.EncodeToString(sum[:]), "MR_CLAUDE_BIN": bin,
		"MR_WORKSPACE": dir, "GITHUB_RUN_ID": "55", "GITHUB_OUTPUT": outFile, "PATH": os.Getenv("PATH"),
	}, dir
}

func TestAgentCommand(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		edit     func(map[string]string)
		code     int
		status   string
		contains string
	}{
		{"completed", `echo '{"type":"result","subtype":"success","num_turns":1,"result":"hi"}'`, nil, 0, "completed", "run 55-1 completed"},
		{"engine crash", `echo "fatal: cannot start" >&2; exit 3`, nil, 1, "failed", "fatal: cannot start"},
		{"bad setting", "", func(e map[string]string) { e["MR_TIMEOUT"] = "forever" }, 1, "", "MR_TIMEOUT"},
		{"no bot", "", func(e map[string]string) { delete(e, "BOT_LOGIN") }, 1, "", "BOT_LOGIN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, dir := agentTestEnv(t, tc.script)
			if tc.edit != nil {
				tc.edit(env)
			}
			var out, errb bytes.Buffer
			code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return env[k] }}, []string{"agent"})
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			assert.Contains(t, out.String()+errb.String(), tc.contains)
			if tc.status == "" {
				return
			}
			o, err := record.ReadOutcome(filepath.Join(dir, "runs", "55-1"))
			require.NoError(t, err)
			assert.Equal(t, tc.status, o.Status)
			outputs, err := os.ReadFile(env["GITHUB_OUTPUT"])
			require.NoError(t, err)
			assert.Contains(t, string(outputs), "status<<")
			assert.Contains(t, string(outputs), "\n"+tc.status+"\n")
			outs, err := actions.ReadOutputs(env["GITHUB_OUTPUT"])
			require.NoError(t, err)
			assert.Equal(t, contract.AgentStageStarted, outs[contract.AgentStageOutput], "set before the record, for publish")
		})
	}
}

func TestAgentCommandRejectsArguments(t *testing.T) {
	var out, errb bytes.Buffer
	code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }}, []string{"agent", "extra"})
	assert.Equal(t, 2, code)
	assert.Contains(t, errb.String(), "unexpected argument")
}
