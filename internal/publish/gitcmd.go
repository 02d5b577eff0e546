package publish

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/gitexec"
	"github.com/mention-runner/mention-runner/internal/redact"
)

// gitTimeout bounds one git command (a push of a bundle at the size cap
// included); a hung remote must not hang the publish job.
const gitTimeout = 5 * time.Minute

// git runs git commands for pushing PR branches. The token travels in an
// http.extraHeader set through GIT_CONFIG_* variables: never in a URL,
// never on a command line another process could read, never logged.
type git struct {
	token string
	home  string // an empty HOME, so no user config applies
}

// hardening keeps repository or user config from running code or
// prompting, and refuses redirects that would carry the header elsewhere.
var hardening = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "http.followRedirects=false",
	"-c", "credential.helper=",
	"-c", "protocol.allow=never",
	"-c", "protocol.https.allow=always",
	"-c", "protocol.http.allow=always", // the operator's own API URL (GHES, tests)
	"-c", "protocol.file.allow=always", // the local bundle file
}

func (g git) env(auth bool) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + g.home,
		"LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
	}
	if auth && g.token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + g.token))
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}
	return env
}

// run runs git in dir; auth adds the token header (only for commands that
// talk to the GitHub host).
func (g git) run(ctx context.Context, dir string, auth bool, args ...string) (string, error) {
	c := gitexec.Command{Dir: dir, Config: hardening, Env: g.env(auth), Timeout: gitTimeout, Scrub: g.scrub}
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
