// Package gitexec runs one git command with the caller's hardening flags,
// environment and time limit, and reports a failure with git's own words.
package gitexec

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	return c.RunInput(ctx, nil, args...)
}

// RunInput is Run with stdin as the command's standard input (for the
// --stdin forms that do several updates in one process and transaction).
func (c Command) RunInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, c.Config...), args...)...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
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

// Hardening is the -c flags every git the runner starts carries, whatever
// the repository's own config says: no fsmonitor or hook program runs, no
// credential helper is asked, no transport but https/http (and local
// files, for bundles and packs) is used, and redirects are not followed
// (they would carry an auth header elsewhere). No background maintenance
// or gc is started either: every repository the runner's git touches is a
// short-lived scratch or job checkout, and an auto-maintenance run after a
// fetch or commit is one more process per command that only packs objects
// of a repository about to be deleted.
var Hardening = []string{
	"-c", "maintenance.auto=false",
	"-c", "gc.auto=0",
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "credential.helper=",
	"-c", "core.askPass=",
	"-c", "http.followRedirects=false",
	"-c", "protocol.allow=never",
	"-c", "protocol.https.allow=always",
	"-c", "protocol.http.allow=always", // the operator's own API URL (GHES, tests)
	"-c", "protocol.file.allow=always", // local bundles and packs
	// Nothing we run signs or verifies (commit.gpgsign=false and
	// log.showSignature=false where it matters), but should a command
	// ever do so, no program the repository names runs: a program that
	// cannot run fails the command instead.
	"-c", "gpg.program=" + os.DevNull,
	"-c", "gpg.ssh.program=" + os.DevNull,
	"-c", "gpg.x509.program=" + os.DevNull,
	"-c", "gpg.ssh.defaultKeyCommand=",
	// a fetch into a repository with alternates lists their refs with
	// this program (empty: git's own for-each-ref)
	"-c", "core.alternateRefsCommand=",
}

// driverKeys are the settings through which a repository's config names a
// program for a driver an attribute picks (.gitattributes is content: the
// target's, or the agent's): filter.<name>.clean/smudge/process run on
// `git add` and checkout, merge.<name>.driver on a 3-way apply, and
// diff.<name>.command/textconv on a diff without --no-ext-diff/
// --no-textconv. No -c can pin a name not known in advance, so
// WithoutDrivers reads the names a repository defines and empties each
// (an empty program is none: git runs no filter and stores the file as
// it is; required=false, or a "required" filter with no program fails the
// add; an empty merge driver fails the merge, so the apply is refused).
var driverKeys = map[string][]string{
	"filter": {"clean=", "smudge=", "process=", "required=false"},
	"merge":  {"driver="},
	"diff":   {"command=", "textconv="},
}

// WithoutDrivers is c with -c flags that empty every filter, merge and
// diff driver program the config of c's repository defines (its own
// config, included files, the worktree config), read by one git config
// run. A driver name holding '=' cannot be given with -c (git splits the
// flag at the first '='): refused with an error, never run. The names
// are read before the command runs: whoever can write the repository's
// config while it runs can also run programs as we do.
func (c Command) WithoutDrivers(ctx context.Context) (Command, error) {
	out, err := c.Run(ctx, "config", "--null", "--name-only", "--get-regexp", `^(filter|merge|diff)\..*\.`)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return c, nil // git config's "no such key"
	}
	if err != nil {
		return c, fmt.Errorf("gitexec: list the repository's drivers: %w", err)
	}
	seen := map[string]bool{}
	var flags []string
	for _, key := range strings.Split(string(out), "\x00") {
		sec, rest, ok := strings.Cut(key, ".")
		i := strings.LastIndexByte(rest, '.')
		if !ok || i < 0 || driverKeys[sec] == nil {
			continue
		}
		name := rest[:i]
		if seen[sec+"."+name] {
			continue
		}
		seen[sec+"."+name] = true
		if strings.Contains(name, "=") {
			return c, fmt.Errorf("gitexec: the repository's config defines the %s driver %q, whose program cannot be switched off (the name holds '='); remove it", sec, name)
		}
		for _, kv := range driverKeys[sec] {
			flags = append(flags, "-c", sec+"."+name+"."+kv)
		}
	}
	c.Config = append(append([]string{}, c.Config...), flags...)
	return c, nil
}

// Env is an isolated environment for git: PATH only from ours, HOME as
// given (os.DevNull when empty), no system or global config (so no
// operator or user setting, helper or alias applies), no prompts, C
// locale, and none of our GIT_* variables (they could point git at another
// repository or index). extra is appended (e.g. AuthEnv, GIT_DIR).
func Env(home string, extra ...string) []string {
	if home == "" {
		home = os.DevNull
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
	}
	return append(env, extra...)
}

// AuthEnv carries token to the GitHub host in an extraHeader set
// through GIT_CONFIG_* variables: never in a URL, never on a command line
// another process could read. The header is scoped to baseURL (the server
// the clone URLs start with: http.<baseURL>/.extraHeader), so git sends
// it there only: a url.<elsewhere>.insteadOf rewriting a clone URL, or a
// redirect, would not carry it to another host. No token or no base URL,
// no header (git's own error then says the server wants credentials).
func AuthEnv(token, baseURL string) []string {
	if token == "" || baseURL == "" {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http." + strings.TrimSuffix(baseURL, "/") + "/.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic}
}

// DiscoveryEnv keeps a git started in workDir (or below it) from finding a
// repository above workDir: workDir's parent is a ceiling git does not
// search up into, and discovery never crosses a filesystem boundary. The
// engine's work tree has no .git of its own (its git directory is kept
// elsewhere), so without this a git the engine runs there could find and
// use whatever repository encloses the workspace (the runner's own
// checkout, a self-hosted runner's home). workDir must be absolute; an
// empty one sets no ceiling.
func DiscoveryEnv(workDir string) []string {
	env := []string{"GIT_DISCOVERY_ACROSS_FILESYSTEM=0"}
	if filepath.IsAbs(workDir) {
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Clean(workDir)))
	}
	return env
}

// Isolated is a Command with Hardening and Env(home, extra...): the way
// every git the runner starts should be set up.
func Isolated(dir, home string, timeout time.Duration, extra ...string) Command {
	return Command{Dir: dir, Config: Hardening, Env: Env(home, extra...), Timeout: timeout}
}

// ConfigEnv is Hardening as GIT_CONFIG_COUNT/KEY/VALUE variables, plus no
// system or global config and no prompts: for the environment of a program
// we start that may run git itself (an engine), so its git gets the same
// protection as ours, whatever the repository's config says.
func ConfigEnv() []string {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0"}
	n := 0
	for i := 0; i+1 < len(Hardening); i += 2 {
		k, v, _ := strings.Cut(Hardening[i+1], "=")
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, v))
		n++
	}
	return append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", n))
}
