package benchreport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// launchContext is a minimal trusted context for `runner agent`.
const launchContext = `{"repository":{"full_name":"octo/hello","default_branch":"main"},"issue":{"number":5},
"trigger_comment":{"id":9,"node_id":"IC_9","html_url":"https://github.com/octo/hello/issues/5#issuecomment-9",
"body":"@helperbot say hi","user":{"login":"alice"},"created_at":"2026-01-01T00:00:00Z"}}`

// fakeClaude records when it was started (ns since the epoch) and ends the
// session at once, so the runner's own start-up is all that is timed.
const fakeClaude = `#!/bin/sh
date +%s%N > "$(dirname "$0")/launched"
echo '{"type":"result","subtype":"success","num_turns":1,"result":"hi"}'
`

// EngineLaunch runs `runnerBin agent` runs times with a fake claude binary
// and returns the median time from just before the runner process is
// started to the moment the engine process starts.
func EngineLaunch(ctx context.Context, runnerBin string, runs int) (time.Duration, error) {
	if runs < 1 {
		return 0, fmt.Errorf("engine launch: runs must be at least 1, got %d", runs)
	}
	var ds []time.Duration
	for i := 0; i < runs; i++ {
		d, err := engineLaunchOnce(ctx, runnerBin)
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

func engineLaunchOnce(ctx context.Context, runnerBin string) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "benchreport-launch-")
	if err != nil {
		return 0, fmt.Errorf("engine launch: %w", err)
	}
	defer os.RemoveAll(dir)
	ctxPath := filepath.Join(dir, "context.json")
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(ctxPath, []byte(launchContext), 0o644); err != nil {
		return 0, fmt.Errorf("engine launch: %w", err)
	}
	if err := os.WriteFile(bin, []byte(fakeClaude), 0o755); err != nil {
		return 0, fmt.Errorf("engine launch: %w", err)
	}
	sum := sha256.Sum256([]byte(launchContext))
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runnerBin, "agent")
	cmd.Env = []string{
		"BOT_LOGIN=helperbot", "CONTROL_REPO=octo/control", "MR_RUN_DIR=" + filepath.Join(dir, "runs"),
		"MR_CONTEXT_FILE=" + ctxPath, "MR_CONTEXT_SHA256=" + hex.EncodeToString(sum[:]), "MR_CLAUDE_BIN=" + bin,
		"MR_WORKSPACE=" + dir, "GITHUB_RUN_ID=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir,
	}
	start := time.Now()
	if _, err := RunChild(ctx, cmd); err != nil {
		return 0, fmt.Errorf("engine launch: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "launched"))
	if err != nil {
		return 0, fmt.Errorf("engine launch: the fake engine was never started: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("engine launch: fake engine timestamp %q: %w", raw, err)
	}
	return time.Unix(0, ns).Sub(start), nil
}
