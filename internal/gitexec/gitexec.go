// Package gitexec runs one git command with the caller's hardening flags,
// environment and time limit, and reports a failure with git's own words.
package gitexec

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Error is a git command that failed; Stderr is its own explanation
// (scrubbed when the Command says so).
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Command is how to run git: each caller keeps its own hardening, since
// what must be refused differs (a local checkout vs a push with a token).
type Command struct {
	Dir     string
	Config  []string                   // "-c key=value" flags placed before every command's args
	Env     []string                   // the whole environment; nil would inherit ours, so callers set it
	Timeout time.Duration              // bounds one command; a hung git must not hang the job
	Scrub   func(stderr string) string // applied to stderr before it is kept; nil keeps it as is
}

// Run runs git args in c.Dir and returns its stdout; a failure is an *Error
// (wrapping the context's error when the time limit or cancellation hit).
func (c Command) Run(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, c.Config...), args...)...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		msg := stderr.String()
		if c.Scrub != nil {
			msg = c.Scrub(msg)
		}
		return nil, &Error{Args: args, Stderr: msg, Err: err}
	}
	return stdout.Bytes(), nil
}
