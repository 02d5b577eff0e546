package gitexec

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

func TestErrorMessage(t *testing.T) {
	base := errors.New("exit status 128")
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"stderr wins", &Error{Args: []string{"push", "origin"}, Stderr: "  fatal: no remote\n", Err: base}, "git push origin: fatal: no remote"},
		{"empty stderr falls back", &Error{Args: []string{"status"}, Stderr: " \n", Err: base}, "git status: exit status 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
			assert.ErrorIs(t, tt.err, base)
		})
	}
}

func TestRun(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	tests := []struct {
		name       string
		cmd        Command
		args       []string
		wantOut    string
		wantStderr string // substring of Error.Stderr; "" = success expected
		wantIs     error
	}{
		{"config flags apply", Command{Config: []string{"-c", "x.y=hardened"}}, []string{"config", "x.y"}, "hardened\n", "", nil},
		{"failure keeps stderr", Command{}, []string{"no-such-subcommand"}, "", "is not a git command", nil},
		{"scrub applies to stderr", Command{Scrub: func(s string) string { return strings.ReplaceAll(s, "no-such", "[X]") }},
			[]string{"no-such-subcommand"}, "", "'[X]-subcommand'", nil},
		{"time limit", Command{Timeout: time.Nanosecond}, []string{"version"}, "", "", context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cmd
			c.Dir, c.Env = t.TempDir(), env
			if c.Timeout == 0 {
				c.Timeout = time.Minute
			}
			out, err := c.Run(context.Background(), tt.args...)
			if tt.wantStderr == "" && tt.wantIs == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.wantOut, string(out))
				return
			}
			var ge *Error
			require.ErrorAs(t, err, &ge)
			assert.Nil(t, out)
			assert.Equal(t, tt.args, ge.Args)
			assert.Contains(t, ge.Stderr, tt.wantStderr)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
		})
	}
}

// TestConfigEnv: the hardening reaches a git that only gets the
// environment, and beats the repository's own config.
func TestConfigEnv(t *testing.T) {
	dir := t.TempDir()
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, ConfigEnv()...)
	c := Command{Dir: dir, Env: env, Timeout: time.Minute}
	_, err := c.Run(context.Background(), "init", "--quiet")
	require.NoError(t, err)
	_, err = c.Run(context.Background(), "config", "core.hooksPath", ".githooks")
	require.NoError(t, err)
	out, err := c.Run(context.Background(), "config", "core.hooksPath")
	require.NoError(t, err)
	assert.Equal(t, os.DevNull+"\n", string(out))
	out, err = c.Run(context.Background(), "config", "core.fsmonitor")
	require.NoError(t, err)
	assert.Equal(t, "false\n", string(out))
}

// TestDiscoveryEnv: with DiscoveryEnv, a git started in a directory that
// has no .git of its own finds no repository in a parent directory, as it
// does without it.
func TestDiscoveryEnv(t *testing.T) {
	assert.Equal(t, []string{"GIT_DISCOVERY_ACROSS_FILESYSTEM=0", "GIT_CEILING_DIRECTORIES=/a/b"}, DiscoveryEnv("/a/b/work/"))
	assert.Equal(t, []string{"GIT_DISCOVERY_ACROSS_FILESYSTEM=0"}, DiscoveryEnv("relative"), "no ceiling from a relative path")

	parent := t.TempDir()
	_, err := Isolated(parent, "", time.Minute).Run(context.Background(), "init", "-q")
	require.NoError(t, err)
	work := filepath.Join(parent, "ws", "target")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "sub"), 0o755))
	for _, dir := range []string{work, filepath.Join(work, "sub")} {
		_, err = Isolated(dir, "", time.Minute).Run(context.Background(), "rev-parse", "--git-dir")
		require.NoError(t, err, "without a ceiling git finds the parent repository (the case this guards)")
		_, err = Isolated(dir, "", time.Minute, DiscoveryEnv(work)...).Run(context.Background(), "rev-parse", "--git-dir")
		var ge *Error
		require.ErrorAs(t, err, &ge, dir)
		assert.Contains(t, ge.Stderr, "not a git repository", dir)
	}
}

// TestWithoutDrivers: every driver the repository's config defines (its
// own file or one it includes; a name may hold dots, capitals, spaces and
// quotes) gets its programs emptied, and git reads the emptied values; a
// name holding '=' (which -c would split there, leaving the program set)
// is refused.
func TestWithoutDrivers(t *testing.T) {
	tests := []struct {
		name      string
		config    string // appended to the repository's config; inc is an included file
		inc       string
		wantFlags []string // after Hardening
		wantErr   string
	}{
		{name: "none", config: "[diff]\n\texternal = x\n[merge]\n\tdefault = text\n"},
		{name: "one of each, one included",
			config:    "[filter \"A.b\"]\n\tclean = x\n[merge \"m \\\"q\"]\n\tdriver = y\n\tname = m\n[include]\n\tpath = inc\n",
			inc:       "[diff \"d\"]\n\ttextconv = z\n",
			wantFlags: []string{"-c", "filter.A.b.clean=", "-c", "filter.A.b.smudge=", "-c", "filter.A.b.process=", "-c", "filter.A.b.required=false", "-c", "merge.m \"q.driver=", "-c", "diff.d.command=", "-c", "diff.d.textconv="}},
		{name: "a name with =", config: "[filter \"a=b\"]\n\tclean = x\n", wantErr: `the filter driver "a=b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			c := Isolated(dir, "", time.Minute)
			_, err := c.Run(context.Background(), "init", "--quiet")
			require.NoError(t, err)
			gittemplate.Append(t, filepath.Join(dir, ".git", "config"), tt.config)
			gittemplate.Append(t, filepath.Join(dir, ".git", "inc"), tt.inc)
			got, err := c.WithoutDrivers(context.Background())
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantFlags, append([]string(nil), got.Config[len(Hardening):]...))
			assert.Equal(t, Hardening, c.Config, "the command it came from is unchanged")
			if len(tt.wantFlags) > 0 {
				for _, key := range []string{"filter.A.b.clean", "merge.m \"q.driver"} {
					out, err := got.Run(context.Background(), "config", "--get", key)
					require.NoError(t, err)
					assert.Equal(t, "\n", string(out), key)
				}
			}
		})
	}
}

// TestHardeningRunsNoConfiguredProgram: a program the repository's config
// names for signing or for listing an alternate's refs does not run under
// Hardening, even for a command that would use it (a caller that forgot
// commit.gpgsign=false, a fetch into a repository with alternates); the
// command fails instead or does without.
func TestHardeningRunsNoConfiguredProgram(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	_, err := Isolated(src, "", time.Minute).Run(ctx, "init", "--quiet")
	require.NoError(t, err)
	_, err = Isolated(src, "", time.Minute).Run(ctx, "-c", "user.name=u", "-c", "user.email=e@example.com",
		"commit", "--quiet", "--allow-empty", "-m", "one")
	require.NoError(t, err)
	sign := []string{"-c", "user.name=u", "-c", "user.email=e@example.com", "-c", "commit.gpgsign=true",
		"commit", "--quiet", "--allow-empty", "-m", "signed?"}
	tests := []struct {
		name   string
		config string // %s is the program
		args   []string
	}{
		{"gpg.program", "[gpg]\n\tprogram = %s\n", sign},
		{"gpg.x509.program", "[gpg]\n\tformat = x509\n[gpg \"x509\"]\n\tprogram = %s\n", sign},
		{"gpg.ssh.defaultKeyCommand", "[gpg]\n\tformat = ssh\n[gpg \"ssh\"]\n\tdefaultKeyCommand = %s\n", sign},
		{"gpg.ssh.program", "[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = key::ssh-ed25519 AAAA\n[gpg \"ssh\"]\n\tprogram = %s\n", sign},
		{"core.alternateRefsCommand", "[core]\n\talternateRefsCommand = %s\n", []string{"fetch", "--quiet", "file://" + src, "HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, canary, prog := t.TempDir(), filepath.Join(t.TempDir(), "canary"), filepath.Join(t.TempDir(), "prog")
			require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\necho ran >> '"+canary+"'\n"), 0o755))
			c := Isolated(dir, "", time.Minute)
			_, err := c.Run(ctx, "init", "--quiet")
			require.NoError(t, err)
			gittemplate.Append(t, filepath.Join(dir, ".git", "config"), fmt.Sprintf(tt.config, prog))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "objects", "info", "alternates"),
				[]byte(filepath.Join(src, ".git", "objects")+"\n"), 0o644))
			_, _ = c.Run(ctx, tt.args...) // fails or not: the program must not run
			assert.NoFileExists(t, canary)
		})
	}
}

// authServer is an HTTP server that records the Authorization header of
// every request and answers 404 (the command fails; what was sent is
// what counts).
type authServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newAuthServer(t *testing.T) *authServer {
	s := &authServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authServer) seen() (requests int, withAuth int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.auth {
		if a != "" {
			withAuth++
		}
	}
	return len(s.auth), withAuth
}

// TestAuthEnvOnlyToTheServer: the token AuthEnv carries reaches the
// server it names, and no other host, even when the repository's config
// (or a file it includes) rewrites the clone URL to another one
// (url.<other>.insteadOf / pushInsteadOf).
func TestAuthEnvOnlyToTheServer(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		config   string // %[1]s is the other host's URL, %[2]s the GitHub host's
		inc      bool   // in an included file
		args     []string
		wantHost bool // the GitHub host gets the request (with the token)
	}{
		{name: "the GitHub host", args: []string{"ls-remote"}, wantHost: true},
		{name: "url.insteadOf", config: "[url \"%[1]s/\"]\n\tinsteadOf = %[2]s/\n", args: []string{"ls-remote"}},
		// deleting a branch: git asks the server for its refs first
		{name: "url.pushInsteadOf, included", config: "[url \"%[1]s/\"]\n\tpushInsteadOf = %[2]s/\n", inc: true,
			args: []string{"push", "--porcelain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, other := newAuthServer(t), newAuthServer(t)
			dir := t.TempDir()
			c := Isolated(dir, "", time.Minute, AuthEnv("tok3n", host.URL+"/")...)
			_, err := c.Run(ctx, "init", "--quiet")
			require.NoError(t, err)
			cfg := ""
			if tt.config != "" {
				cfg = fmt.Sprintf(tt.config, other.URL, host.URL)
			}
			if tt.inc {
				gittemplate.Append(t, filepath.Join(dir, ".git", "inc"), cfg)
				cfg = "[include]\n\tpath = inc\n"
			}
			gittemplate.Append(t, filepath.Join(dir, ".git", "config"), cfg)
			_, err = c.Run(ctx, append(tt.args, host.URL+"/o/r.git", ":refs/heads/x")...)
			require.Error(t, err, "the servers answer 404")
			n, auth := other.seen()
			assert.Zero(t, auth, "the other host got the token (%d requests)", n)
			n, auth = host.seen()
			if tt.wantHost {
				assert.Positive(t, n)
				assert.Equal(t, n, auth, "every request to the GitHub host carries the token")
			} else {
				assert.Zero(t, n, "the URL was rewritten")
				n, _ = other.seen()
				assert.Positive(t, n, "git went to the other host")
			}
		})
	}
	assert.Nil(t, AuthEnv("", "https://github.com"), "no token, no header")
	assert.Nil(t, AuthEnv("tok3n", ""), "no server, no header")
}
