package prbundle

import (
	"bytes"
	"context"
	"os"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

// gitTimeout bounds one git command; local operations on a checkout never
// need longer, and a hung git must not hang the gate or the publish job.
const gitTimeout = 2 * time.Minute

// pinned fixes what decides which paths a range touches, on top of the
// isolation every runner git gets (gitexec.Hardening, gitexec.Env):
// command-line -c beats every config file, so "log.showRoot=false" in a
// checkout cannot hide a root commit's files, nor "log.diffMerges=
// first-parent" a merge's changes from its other parents (-m), nor a
// replace ref (refs/replace/<commit>) show another commit in a commit's
// place. TestHostileConfigSeesTruePaths has a row for each.
var pinned = []string{
	"-c", "log.showRoot=true",
	"-c", "log.diffMerges=separate",
	"-c", "log.showSignature=false", // verifying runs the checkout's gpg.program
	"-c", "diff.relative=false",
	"-c", "core.quotePath=false",
	"-c", "core.useReplaceRefs=false",
}

// pinnedEnv is pinned's part that only the environment sets: no graft
// file (<git dir>/info/grafts would give a commit other parents, so its
// diff against them). A shallow checkout's boundary is kept apart, in
// <git dir>/shallow, and still read.
var pinnedEnv = []string{"GIT_GRAFT_FILE=" + os.DevNull}

// git runs one isolated git command in dir and returns its stdout.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitIn(ctx, dir, nil, args...)
}

// gitIn is git with extra environment variables (an index, an identity).
func gitIn(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	return command(dir, env).Run(ctx, args...)
}

// command is the git command git and gitIn run.
func command(dir string, env []string) gitexec.Command {
	c := gitexec.Isolated(dir, "", gitTimeout, append(append([]string{"GIT_OPTIONAL_LOCKS=0"}, pinnedEnv...), env...)...)
	c.Config = append(append([]string{}, c.Config...), pinned...)
	return c
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
