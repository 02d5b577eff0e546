// Package process runs an engine's CLI the way every engine needs it: in
// its own process group with exactly the environment it is given, stdout
// handed to a decoder as it arrives, the tail of stderr kept for error
// reports, and on cancellation SIGTERM to the whole group, then SIGKILL
// after a grace period, so MCP servers and shells the CLI started die too.
package process

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Defaults for Spec's zero fields.
const (
	DefaultGrace      = 5 * time.Second
	DefaultStderrTail = 8 << 10
)

// Spec is one CLI run.
type Spec struct {
	Bin   string
	Args  []string
	Dir   string
	Env   []string // the whole environment; nil means an empty one, never the runner's
	Stdin io.Reader
	// Grace is how long the CLI gets after SIGTERM before the group is
	// killed; zero means DefaultGrace.
	Grace time.Duration
	// StderrTail is how many bytes of stderr are kept; zero means
	// DefaultStderrTail.
	StderrTail int
}

// Exit is how the run ended.
type Exit struct {
	Code    int    // exit code, -1 when killed by a signal
	Signal  string // the signal that killed it, if any
	Stopped bool   // ctx ended first and the group was stopped
	Stderr  string // tail of stderr
	WaitErr error  // an I/O error after a clean exit (pipes held open)
}

// Run starts the CLI and blocks until it and decode are done. decode reads
// stdout until EOF (it must not stop early: Run drains what it leaves).
// The error is only about starting the process.
func Run(ctx context.Context, s Spec, decode func(io.Reader)) (Exit, error) {
	cmd := exec.Command(s.Bin, s.Args...)
	cmd.Dir = s.Dir
	// Never inherit: a nil Env would hand the CLI the runner's whole
	// environment, tokens included.
	cmd.Env = append([]string{}, s.Env...)
	cmd.Stdin = s.Stdin
	stderr := NewTail(orInt(s.StderrTail, DefaultStderrTail))
	cmd.Stderr = stderr
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	grace := orDur(s.Grace, DefaultGrace)
	// If a grandchild keeps stdout or stderr open after the CLI exits,
	// stop waiting for it after the grace period.
	cmd.WaitDelay = grace + time.Second

	if err := cmd.Start(); err != nil {
		pw.Close()
		return Exit{}, fmt.Errorf("start %s: %w", s.Bin, err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	stopped := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		stopOnCancel(ctx, pgid, grace, exited, stopped)
	}()
	decoded := make(chan struct{})
	go func() {
		defer close(decoded)
		decode(pr)
		// EOF, or the decoder gave up: drain so the writer never blocks
		_, _ = io.Copy(io.Discard, pr)
	}()

	waitErr := cmd.Wait()
	close(exited)
	pw.Close()
	<-decoded
	<-watchDone
	// The CLI is gone; anything left in its group (an MCP server or a
	// shell that ignored the hang-up) goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	x := Exit{Stderr: stderr.String()}
	select {
	case <-stopped:
		x.Stopped = true
	default:
	}
	x.Code, x.Signal = exitStatus(cmd)
	if waitErr != nil && x.Code == 0 && x.Signal == "" {
		x.WaitErr = waitErr
	}
	return x, nil
}

// stopOnCancel sends SIGTERM to the process group when ctx ends, then
// SIGKILL after the grace period if the CLI has not exited by then.
func stopOnCancel(ctx context.Context, pgid int, grace time.Duration, exited, stopped chan struct{}) {
	select {
	case <-exited:
		return
	case <-ctx.Done():
	}
	close(stopped)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
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
