package claudetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds one Claude Code run when Options.Timeout is zero. It
// only catches a hang: a scripted run takes 2-10 s, and over 20 s on the
// 2-core machine with two CPU hogs running.
const DefaultTimeout = 5 * time.Minute

// Options describe one Claude Code run.
type Options struct {
	Bin     string        // the claude binary
	Dir     string        // working directory
	Env     []string      // full environment, e.g. OfflineEnv(...)
	Args    []string      // command-line arguments
	Prompt  string        // written to stdin
	Timeout time.Duration // hard limit; the whole process group is killed
}

// Result is what a run produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	TimedOut bool
}

// Run starts Claude Code in its own process group and waits for it; at the
// timeout (or when ctx ends) the whole group is killed, so MCP servers and
// shells it started die with it. A non-zero exit is not an error: callers
// read ExitCode and the stream-json output.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, o.Bin, o.Args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.Stdin = strings.NewReader(o.Prompt)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second // don't hang on pipes held by grandchildren

	err := cmd.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		res.TimedOut = true
		return res, fmt.Errorf("claude run: killed after %s: %w", o.Timeout, ctx.Err())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("claude run: %w", err)
	}
	return res, nil
}

// Args are the flags the integration tests run Claude Code with: print
// mode, stream-json (which needs --verbose), only the MCP servers in
// mcpConfig, dontAsk (anything not allowed is refused, never prompted),
// only the listed tools allowed, and a turn limit. The prompt goes on stdin.
func Args(mcpConfig string, allowedTools []string, maxTurns int) []string {
	return []string{
		"-p", "--verbose", "--output-format", "stream-json",
		"--mcp-config", mcpConfig, "--strict-mcp-config",
		"--permission-mode", "dontAsk",
		"--allowedTools", strings.Join(allowedTools, ","),
		"--max-turns", fmt.Sprint(maxTurns),
	}
}
