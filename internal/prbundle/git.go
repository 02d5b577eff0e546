package prbundle

import (
	"bytes"
	"context"
	"os"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/gitexec"
)

// gitTimeout bounds one git command; local operations on a checkout never
// need longer, and a hung git must not hang the gate or the publish job.
const gitTimeout = 2 * time.Minute

// hardening keeps repo-local config written by the agent from running code
// in our git processes (fsmonitor, hooks) or prompting for anything.
var hardening = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=always",
}

// git runs one git command in dir and returns its stdout.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	c := gitexec.Command{Dir: dir, Config: hardening, Env: gitEnv(), Timeout: gitTimeout}
	return c.Run(ctx, args...)
}

// gitEnv is the process environment without GIT_* variables, which could
// point git at another repository or index than the one we name.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}

// lines splits NUL- or newline-separated git output, dropping empties.
func lines(b []byte, sep byte) []string {
	var out []string
	for _, s := range bytes.Split(b, []byte{sep}) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}
