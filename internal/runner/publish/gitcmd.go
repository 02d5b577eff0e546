package publish

import (
	"context"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

// gitTimeout bounds one git command (a push of a bundle at the size cap
// included); a hung remote must not hang the publish job.
const gitTimeout = 5 * time.Minute

// git runs git commands for pushing PR branches. The token travels in an
// extraHeader for base set through GIT_CONFIG_* variables
// (gitexec.AuthEnv): never in a URL, never on a command line another
// process could read, never logged, never to another host.
type git struct {
	token string
	base  string // where repositories are served (Options.Git.BaseURL)
	home  string // an empty HOME, so no user config applies
}

func (g git) env(auth bool) []string {
	if auth {
		return gitexec.Env(g.home, gitexec.AuthEnv(g.token, g.base)...)
	}
	return gitexec.Env(g.home)
}

// run runs git in dir; auth adds the token header (only for commands that
// talk to the GitHub host).
func (g git) run(ctx context.Context, dir string, auth bool, args ...string) (string, error) {
	c := gitexec.Command{Dir: dir, Config: gitexec.Hardening, Env: g.env(auth), Timeout: gitTimeout, Scrub: g.scrub}
	out, err := c.Run(ctx, args...)
	return string(out), err
}

// scrub keeps the token and any other secret out of git's stderr, which
// ends up in the run report.
func (g git) scrub(stderr string) string {
	if g.token != "" {
		stderr = strings.ReplaceAll(stderr, g.token, "[REDACTED]")
	}
	return redact.String(stderr)
}
