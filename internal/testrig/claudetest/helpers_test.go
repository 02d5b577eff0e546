package claudetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
)

func TestFindBinary(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	sub := filepath.Join(root, "internal", "pkg")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	pinned := filepath.Join(root, relBin)
	other := filepath.Join(root, "my-claude")
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(root, "not-executable")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))

	tests := []struct {
		name    string
		env     string
		install bool
		want    string
		wantErr string
	}{
		{"env wins", other, true, other, ""},
		{"env not executable", plain, true, "", "not an executable"},
		{"env missing file", filepath.Join(root, "nope"), true, "", "CLAUDE_BIN="},
		{"pinned under module root", "", true, pinned, ""},
		{"pinned missing", "", false, "", "make claude-code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, "tools")))
			if tt.install {
				require.NoError(t, os.MkdirAll(filepath.Dir(pinned), 0o755))
				require.NoError(t, os.WriteFile(pinned, []byte("#!/bin/sh\n"), 0o755))
			}
			getenv := func(k string) string {
				if k == BinEnv {
					return tt.env
				}
				return ""
			}
			got, err := FindBinary(getenv, sub)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrNoBinary)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFindBinaryNoModule(t *testing.T) {
	_, err := FindBinary(func(string) string { return "" }, "/")
	assert.ErrorIs(t, err, ErrNoBinary)
}

func TestRunKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	// The shell starts a grandchild, records its pid, and waits for it.
	res, err := Run(context.Background(), Options{
		Bin: "/bin/sh", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Args:    []string{"-c", "sleep 60 & echo $! > " + pidFile + "; wait"},
		Timeout: 300 * time.Millisecond,
	})
	require.Error(t, err)
	assert.True(t, res.TimedOut)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	// Gone (or a zombie awaiting its reaper): signal 0 fails or it is defunct.
	assert.Eventually(t, func() bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || strings.Contains(string(stat), ") Z ")
	}, 10*time.Second, 20*time.Millisecond, "grandchild %d outlived the kill", pid)
}

func TestRunExitCodeAndStdin(t *testing.T) {
	res, err := Run(context.Background(), Options{
		Bin: "/bin/sh", Env: []string{"PATH=/usr/bin:/bin"},
		Args: []string{"-c", "cat; echo oops >&2; exit 3"}, Prompt: "the prompt",
	})
	require.NoError(t, err, "a non-zero exit is not an error")
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "the prompt", string(res.Stdout))
	assert.Equal(t, "oops\n", string(res.Stderr))
	assert.False(t, res.TimedOut)

	_, err = Run(context.Background(), Options{Bin: "/nonexistent/claude"})
	assert.Error(t, err)
}

func TestArgsAndEnv(t *testing.T) {
	args := Args("/x/mcp.json", []string{"mcp__gate__a", "mcp__gate__b"}, 3)
	assert.Equal(t, []string{"-p", "--verbose", "--output-format", "stream-json",
		"--mcp-config", "/x/mcp.json", "--strict-mcp-config", "--permission-mode", "dontAsk",
		"--allowedTools", "mcp__gate__a,mcp__gate__b", "--max-turns", "3"}, args)

	t.Setenv("ANTHROPIC_API_KEY", "real-key-must-not-leak")
	env := OfflineEnv("/h", "http://127.0.0.1:1")
	assert.Contains(t, env, "ANTHROPIC_BASE_URL=http://127.0.0.1:1")
	assert.Contains(t, env, "CLAUDE_CONFIG_DIR=/h/.claude")
	assert.Contains(t, env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	assert.Subset(t, env, claude.GateWaitEnv, "Claude Code waits for the gate")
	assert.NotContains(t, env, "ANTHROPIC_API_KEY=real-key-must-not-leak")
	assert.Contains(t, env, "ANTHROPIC_API_KEY="+DummyAPIKey)
}

func TestGateConfigAndLog(t *testing.T) {
	dir := t.TempDir()
	cfg, logPath, err := WriteGateConfig(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Contains(t, string(b), GateLogEnv)

	calls, err := ReadGateCalls(logPath)
	require.NoError(t, err)
	assert.Empty(t, calls, "no log yet is no calls")
	require.NoError(t, os.WriteFile(logPath, []byte(`{"tool":"noop","args":{}}`+"\n"+"garbage\n"), 0o644))
	_, err = ReadGateCalls(logPath)
	assert.ErrorContains(t, err, "gate log line")
}
