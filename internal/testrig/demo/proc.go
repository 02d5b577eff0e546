package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Stage is one process the flow ran: a job step of the workflow.
type Stage struct {
	Name     string   // e.g. "assemble 2/4", "agent", "publish"
	Dir      string   // the job's working directory (its "VM")
	Args     []string // binary and arguments
	Env      []string // the process's whole environment, KEY=VALUE, sorted
	ExitCode int      // -1 when it did not exit by itself
	Stdout   string
	Stderr   string
	Outputs  map[string]string // step outputs from GITHUB_OUTPUT
	Duration time.Duration
}

// Getenv looks a variable up in the stage's environment.
func (s *Stage) Getenv(key string) (string, bool) {
	for _, kv := range s.Env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v, true
		}
	}
	return "", false
}

// StageError is a stage that did not end the way the flow needs.
type StageError struct {
	Stage *Stage
	Err   error
}

func (e *StageError) Error() string {
	msg := fmt.Sprintf("%s (in %s): %v", e.Stage.Name, e.Stage.Dir, e.Err)
	if tail := lastLines(e.Stage.Stderr, 15); tail != "" {
		msg += "\n--- stderr (last lines) ---\n" + tail
	}
	return msg
}

func (e *StageError) Unwrap() error { return e.Err }

// run starts bin with exactly env (nothing inherited) in dir and waits,
// bounded by timeout. A non-zero exit is not an error here: callers
// decide what an exit code means, as a workflow's `if:` would.
func run(ctx context.Context, name, dir string, timeout time.Duration, env []string, bin string, args ...string) (*Stage, error) {
	sort.Strings(env)
	st := &Stage{Name: name, Dir: dir, Args: append([]string{bin}, args...), Env: env, ExitCode: -1}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	// Its own process group, so a timeout also stops what it started
	// (the gate, Claude Code, git).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	st.Duration = time.Since(start)
	st.Stdout, st.Stderr = stdout.String(), stderr.String()
	// Keep the job's log next to its files, as the Actions UI would.
	_ = os.WriteFile(filepath.Join(dir, "stdout.log"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "stderr.log"), stderr.Bytes(), 0o644)
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return st, &StageError{Stage: st, Err: fmt.Errorf("did not finish within %s", timeout)}
	case errors.As(err, &exit):
		st.ExitCode = exit.ExitCode()
	case err != nil:
		return st, &StageError{Stage: st, Err: fmt.Errorf("start %s: %w", bin, err)}
	default:
		st.ExitCode = 0
	}
	return st, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
