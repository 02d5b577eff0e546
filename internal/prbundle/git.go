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
// in our git processes (fsmonitor, hooks, gpg) or prompting for anything,
// and pins what decides which paths a range touches: command-line -c
// beats every config file, so "log.showRoot=false" in a checkout cannot
// hide a root commit's files.
var hardening = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=always",
	"-c", "log.showRoot=true",
	"-c", "log.showSignature=false",
	"-c", "diff.relative=false",
	"-c", "core.quotePath=false",
}

// git runs one git command in dir and returns its stdout.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	c := gitexec.Command{Dir: dir, Config: hardening, Env: gitEnv(), Timeout: gitTimeout}
	return c.Run(ctx, args...)
}

// gitEnv is the process environment without GIT_* variables, which could
// point git at another repository or index than the one we name, and
// without the system and user config files, which are the runner's
// machine's, not ours.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
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
