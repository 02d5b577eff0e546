package gitexec

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
