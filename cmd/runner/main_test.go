package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/runner/config"
)

func TestTopLevel(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"--help"}, 0, "Commands:"},
		{[]string{"--version"}, 0, "runner "},
		{[]string{}, 2, "Usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, c.args)
			assert.Equal(t, c.code, code)
			assert.Contains(t, out.String()+errb.String(), c.contains)
		})
	}
}

// TestHelpListsSettings pins where each subcommand's settings come from:
// the ones configured by the environment list exactly the variables their
// mode reads (from config.Settings, the list config.Load reads), each with
// its default; mcp says it reads only its --config file.
func TestHelpListsSettings(t *testing.T) {
	help := func(t *testing.T, cmd string) string {
		var out, errb bytes.Buffer
		code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, []string{cmd, "--help"})
		require.Equal(t, 0, code, errb.String())
		assert.Empty(t, errb.String())
		return out.String()
	}
	for _, mode := range []string{"agent", "assemble", "fetch", "publish"} {
		t.Run(mode, func(t *testing.T) {
			out := help(t, mode)
			assert.Equal(t, 1, strings.Count(out, "Usage: runner "+mode), "usage printed once")
			assert.True(t, strings.HasSuffix(out, config.EnvHelp(mode)), out)
			lines := map[string]string{}
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 1 {
					lines[f[0]] = l
				}
			}
			for _, s := range config.Settings {
				l, listed := lines[s.Env]
				if !s.ModeUses(mode) {
					assert.False(t, listed, "%s is not read by %s", s.Env, mode)
					continue
				}
				require.True(t, listed, "%s is read by %s", s.Env, mode)
				if s.Default != "" {
					assert.True(t, strings.HasSuffix(l, "(default: "+s.Default+")"), l)
				}
				first, _, _ := strings.Cut(s.Doc, ". ")
				assert.Contains(t, l, first)
			}
		})
	}
	// spot checks against the list, so an empty list cannot pass
	agent := help(t, "agent")
	assert.Regexp(t, `(?m)^  MR_MAX_TURNS +Most agent turns before the run stops as failed\. \(default: 30\)$`, agent)
	assert.Regexp(t, `(?m)^  MR_TIMEOUT +Wall-clock limit for the engine\. \(default: 30m\)$`, agent)
	assert.NotContains(t, agent, "MR_WRITE_GAP", "a publish-only setting")
	assert.Contains(t, help(t, "publish"), "MR_WRITE_GAP")

	mcp := help(t, "mcp")
	assert.Contains(t, mcp, "-config FILE")
	assert.Contains(t, mcp, MCPSettingsHelp)
	assert.NotContains(t, mcp, "MR_")
}
