// Package claude is the engine that runs the real Claude Code CLI in print
// mode: the prompt on stdin, stream-json on stdout parsed as it arrives,
// the gate as its only MCP server, and only the gate's and read-only tools
// allowed. The process runs in its own process group, so cancelling the
// context (timeout, loop) stops Claude Code and every MCP server or shell
// it started.
package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mention-runner/mention-runner/internal/engine"
	"github.com/mention-runner/mention-runner/internal/session"
	"github.com/mention-runner/mention-runner/internal/streamjson"
)

// Defaults for Engine's zero fields.
const (
	DefaultGrace      = 5 * time.Second
	DefaultStderrTail = 8 << 10
)

// MCPConfigFile is the --mcp-config file written into the run directory.
const MCPConfigFile = "mcp.json"

// Engine runs Claude Code. The zero value is not usable; set Bin.
type Engine struct {
	Bin string // the claude executable
	// Grace is how long Claude Code gets after SIGTERM before the group is
	// killed; zero means DefaultGrace.
	Grace time.Duration
	// StderrTail is how many bytes of stderr are kept for errors; zero means
	// DefaultStderrTail.
	StderrTail int
}

// New returns an engine running bin.
func New(bin string) *Engine { return &Engine{Bin: bin} }

// Name is "claude".
func (e *Engine) Name() string { return "claude" }

// ExitError is Claude Code ending badly: a non-zero exit, death by signal,
// or an exit without a result event. It carries the original error text.
type ExitError struct {
	Code     int    // exit code, -1 when killed by a signal
	Signal   string // the signal that killed it, if any
	NoResult bool   // stdout ended without a result event
	Stderr   string // tail of stderr
	Result   string // the result event's text, if one came
}

func (e *ExitError) Error() string {
	var what string
	switch {
	case e.Signal != "":
		what = "claude code was killed by " + e.Signal
	case e.Code != 0:
		what = fmt.Sprintf("claude code exited with status %d", e.Code)
	default:
		what = "claude code exited"
	}
	if e.NoResult {
		what += " without reporting a result"
	}
	var detail []string
	if r := strings.TrimSpace(e.Result); r != "" {
		detail = append(detail, r)
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		detail = append(detail, "stderr:\n"+s)
	}
	if len(detail) > 0 {
		what += ": " + strings.Join(detail, "\n")
	}
	return what
}

// Run starts Claude Code and blocks until it ends or ctx is done. Events
// reach sink in stdout order from one goroutine; lines Claude Code adds in
// later versions arrive as EventUnknown. It returns the result event (nil
// when none came), an *ExitError when Claude Code failed, or ctx's error
// (with the result so far) when it was stopped.
func (e *Engine) Run(ctx context.Context, spec engine.Spec, sink engine.Sink) (*session.Result, error) {
	if e.Bin == "" {
		return nil, errors.New("claude engine: no claude executable configured")
	}
	if spec.RunDir == "" {
		return nil, errors.New("claude engine: spec has no run directory")
	}
	mcpPath := filepath.Join(spec.RunDir, MCPConfigFile)
	if err := WriteMCPConfig(mcpPath, spec.GateCommand); err != nil {
		return nil, fmt.Errorf("claude engine: %w", err)
	}
	if sink == nil {
		sink = func(session.Event) {}
	}

	cmd := exec.Command(e.Bin, Args(spec, mcpPath)...)
	cmd.Dir = spec.WorkDir
	// Never inherit: a nil Env would hand Claude Code the runner's whole
	// environment, tokens included.
	cmd.Env = append([]string{}, spec.Env...)
	cmd.Stdin = strings.NewReader(spec.Prompt)
	stderr := newTail(orInt(e.StderrTail, DefaultStderrTail))
	cmd.Stderr = stderr
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// If a grandchild keeps stdout or stderr open after Claude Code exits,
	// stop waiting for it after the grace period.
	cmd.WaitDelay = orDur(e.Grace, DefaultGrace) + time.Second

	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("claude engine: start %s: %w", e.Bin, err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	stopped := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		e.stopOnCancel(ctx, pgid, exited, stopped)
	}()

	var result *session.Result
	decoded := make(chan struct{})
	go func() {
		defer close(decoded)
		dec := streamjson.NewDecoder(pr)
		for {
			ev, err := dec.Next()
			if err != nil {
				// EOF, or the pipe closed: drain so the writer never blocks
				_, _ = io.Copy(io.Discard, pr)
				return
			}
			if ev.Kind == session.EventResult && ev.Result != nil {
				r := *ev.Result
				result = &r
			}
			sink(ev)
		}
	}()

	waitErr := cmd.Wait()
	close(exited)
	pw.Close()
	<-decoded
	<-watchDone
	// Claude Code is gone; anything left in its group (an MCP server or a
	// shell that ignored the hang-up) goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	select {
	case <-stopped:
		return result, fmt.Errorf("claude engine: stopped: %w", context.Cause(ctx))
	default:
	}
	code, sig := exitStatus(cmd)
	if code == 0 && sig == "" && result != nil {
		return result, nil
	}
	xe := &ExitError{Code: code, Signal: sig, NoResult: result == nil, Stderr: stderr.String()}
	if result != nil {
		xe.Result = result.Text
	}
	if waitErr != nil && code == 0 && sig == "" {
		// e.g. an I/O error on the pipes after WaitDelay
		xe.Stderr = strings.TrimSpace(xe.Stderr + "\n" + waitErr.Error())
	}
	return result, xe
}

// stopOnCancel sends SIGTERM to the process group when ctx ends, then
// SIGKILL after the grace period if Claude Code has not exited by then.
func (e *Engine) stopOnCancel(ctx context.Context, pgid int, exited, stopped chan struct{}) {
	select {
	case <-exited:
		return
	case <-ctx.Done():
	}
	close(stopped)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(orDur(e.Grace, DefaultGrace))
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func exitStatus(cmd *exec.Cmd) (code int, sig string) {
	ps := cmd.ProcessState
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}
