package claude

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/enginetest"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// fakeClaude writes an executable shell script standing in for claude.
func fakeClaude(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

func testSpec(t *testing.T) engine.Spec {
	t.Helper()
	dir := t.TempDir()
	return engine.Spec{
		Prompt: "do the thing", WorkDir: dir, RunDir: dir,
		GateCommand: []string{"/bin/runner", "mcp", "--config", filepath.Join(dir, "gate.json")},
		Env:         []string{"PATH=" + os.Getenv("PATH"), "MR_TEST=1"},
		MaxTurns:    3,
	}
}

const streamOK = `cat > "$PWD/stdin.txt"
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m","tools":["Read","mcp__gate__noop"],"mcp_servers":[{"name":"gate","status":"connected"}]}'
echo '{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"mcp__gate__noop","input":{"reason":"r"}}]}}'
echo '{"type":"brand_new_event","x":1}'
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"noted"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"total_cost_usd":0.01,"result":"done"}'`

func run(t *testing.T, e *Engine, spec engine.Spec) ([]session.Event, *session.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return enginetest.Run(ctx, e, spec)
}

func TestRunSuccess(t *testing.T) {
	spec := testSpec(t)
	evs, res, err := run(t, New(fakeClaude(t, streamOK)), spec)
	require.NoError(t, err)
	require.NotNil(t, res)
	assert.Equal(t, "success", res.Subtype)
	assert.Equal(t, 2, res.NumTurns)
	assert.Equal(t, []session.EventKind{session.EventInit, session.EventToolUse, session.EventUnknown, session.EventToolResult, session.EventResult}, enginetest.Kinds(evs))
	assert.Equal(t, "toolu_1", evs[1].ToolCallID)

	stdin, err := os.ReadFile(filepath.Join(spec.WorkDir, "stdin.txt"))
	require.NoError(t, err)
	assert.Equal(t, "do the thing", string(stdin), "the prompt goes on stdin")

	var cfg mcpConfig
	b, err := os.ReadFile(filepath.Join(spec.RunDir, MCPConfigFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cfg))
	assert.Equal(t, mcpServer{Type: "stdio", Command: "/bin/runner", Args: []string{"mcp", "--config", filepath.Join(spec.RunDir, "gate.json")}}, cfg.MCPServers["gate"])
}

func TestRunEnvironmentIsExactlySpecEnv(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_"+strings.Repeat("a", 36))
	t.Setenv("BOT_TOKEN", "secret")
	spec := testSpec(t)
	dump := filepath.Join(spec.RunDir, "env.txt")
	_, _, err := run(t, New(fakeClaude(t, `env > "`+dump+`"; echo '{"type":"result","subtype":"success"}'`)), spec)
	require.NoError(t, err)
	b, err := os.ReadFile(dump)
	require.NoError(t, err)
	got := strings.Fields(string(b))
	assert.Contains(t, got, "MR_TEST=1")
	for _, kv := range GateWaitEnv {
		assert.Contains(t, got, kv, "Claude Code waits for the gate before its first turn")
	}
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		assert.NotContains(t, []string{"GITHUB_TOKEN", "BOT_TOKEN"}, name)
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		code     int
		noResult bool
		contains []string
	}{
		{"crash with stderr", `echo "TypeError: boom at cli.js:1" >&2; exit 3`, 3, true, []string{"exited with status 3", "without reporting a result", "TypeError: boom"}},
		{"error result", `echo '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 500 internal"}'; echo "retry failed" >&2; exit 1`, 1, false, []string{"API Error: 500 internal", "retry failed"}},
		{"clean exit without result", `echo '{"type":"system","subtype":"init"}'`, 0, true, []string{"without reporting a result"}},
		{"garbage output", `echo 'not json at all'; exit 2`, 2, true, []string{"status 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := run(t, New(fakeClaude(t, tc.script)), testSpec(t))
			var xe *ExitError
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, tc.code, xe.Code)
			assert.Equal(t, tc.noResult, xe.NoResult)
			assert.Equal(t, tc.noResult, res == nil)
			for _, c := range tc.contains {
				assert.Contains(t, err.Error(), c)
			}
		})
	}
}

func TestRunMissingBinary(t *testing.T) {
	_, _, err := run(t, New(filepath.Join(t.TempDir(), "nope")), testSpec(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start")
}

func TestRunEmptyGateCommand(t *testing.T) {
	spec := testSpec(t)
	spec.GateCommand = nil
	_, _, err := run(t, New(fakeClaude(t, streamOK)), spec)
	require.ErrorContains(t, err, "gate command is empty")
}

// TestCancelKillsProcessGroup: a child that ignores SIGTERM still dies,
// and Run returns the cancellation cause.
func TestCancelKillsProcessGroup(t *testing.T) {
	for _, ignoreTerm := range []bool{false, true} {
		t.Run("ignore_term="+strconv.FormatBool(ignoreTerm), func(t *testing.T) {
			spec := testSpec(t)
			pidFile := filepath.Join(spec.RunDir, "child.pid")
			trap := ""
			if ignoreTerm {
				trap = "trap '' TERM; "
			}
			script := trap + `sleep 300 & echo $! > "` + pidFile + `"
echo '{"type":"system","subtype":"init","session_id":"s"}'
wait`
			e := &Engine{Bin: fakeClaude(t, script), Grace: 100 * time.Millisecond}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			stopErr := errors.New("loop detected")
			res, err := e.Run(ctx, spec, func(ev session.Event) {
				if ev.Kind == session.EventInit {
					cancel(stopErr)
				}
			})
			assert.Nil(t, res)
			require.ErrorIs(t, err, stopErr)
			b, rerr := os.ReadFile(pidFile)
			require.NoError(t, rerr)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			require.Positive(t, pid)
			assert.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond, "the grandchild must be gone")
		})
	}
}

// alive reports a process that exists and is not a zombie (a killed
// grandchild is reparented and may wait a moment to be reaped).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// state follows the parenthesised command name
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func TestArgs(t *testing.T) {
	tests := []struct {
		name    string
		spec    engine.Spec
		offered string
		allowed string
		rest    []string
	}{
		{"minimal", engine.Spec{}, "Read,Grep",
			"mcp__gate__add_comment,mcp__gate__create_issue,mcp__gate__create_pull_request,mcp__gate__create_review,mcp__gate__push_to_pull_request,mcp__gate__add_labels,mcp__gate__remove_labels,mcp__gate__noop", []string{}},
		{"all", engine.Spec{WorkDir: "/w/t/", MaxTurns: 7, MaxBudgetUSD: 1.5, Model: "claude-x",
			AllowedTools: []string{"Edit", "Write", "Glob", "Glob(//x/**)", "Bash(git commit:*)", "Read(//ctx.json)", "Edit(//elsewhere/**)", "mcp__other__x", " "}},
			"Read,Grep,Edit,Write,Bash", // never Glob: an absolute pattern lists anywhere
			"mcp__gate__add_comment,mcp__gate__create_issue,mcp__gate__create_pull_request,mcp__gate__create_review,mcp__gate__push_to_pull_request,mcp__gate__add_labels,mcp__gate__remove_labels,mcp__gate__noop," +
				"Read(//w/t/**),Grep(//w/t/**),Edit(//w/t/**),Write(//w/t/**),Glob(//w/t/**),Glob(//x/**),Bash(git commit:*),Read(//ctx.json),Edit(//elsewhere/**),mcp__other__x",
			[]string{"--max-turns", "7", "--max-budget-usd", "1.5", "--model", "claude-x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Args(tc.spec, "/r/mcp.json", "/r/settings.json")
			base := []string{"-p", "--verbose", "--output-format", "stream-json",
				"--setting-sources", "", "--settings", "/r/settings.json",
				"--mcp-config", "/r/mcp.json", "--strict-mcp-config", "--disable-slash-commands",
				"--permission-mode", "dontAsk", "--tools", tc.offered, "--allowedTools", tc.allowed}
			require.Equal(t, base, got[:len(base)])
			assert.Equal(t, tc.rest, got[len(base):])
		})
	}
}
