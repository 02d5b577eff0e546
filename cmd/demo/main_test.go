package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
)

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown engine", nil, []string{"--engine", "gpt"}, `--engine "gpt"`},
		{"claude needs the binary", nil, []string{"--engine", "claude", "--claude-bin", "/nonexistent/claude"}, "claude not found at /nonexistent/claude: run `make claude-code`"},
		{"claude with a key needs the binary too", map[string]string{"ANTHROPIC_API_KEY": "x"}, []string{"--engine", "claude", "--claude-bin", "/nonexistent/claude"}, "claude not found"},
		{"unknown flag", nil, []string{"--nope"}, "nope"},
		{"stray argument", nil, []string{"extra"}, "unexpected argument"},
		{"unknown scenario", nil, []string{"--scenario", "nope"}, `--scenario "nope": want one of default, pr`},
		{"scenario needs replay", map[string]string{"SCENARIO": "loop", "ANTHROPIC_API_KEY": "x"}, []string{"--engine", "claude"}, "replay engine only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			env := &cli.Env{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return c.env[k] }}
			err := run(context.Background(), env, c.args)
			var ue *cli.UsageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Msg, c.want)
			assert.Equal(t, 2, exitCode(err))
		})
	}
}

func TestResetOutOnlyEmptiesItsOwnDirectory(t *testing.T) {
	foreign := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("keep"), 0o644))
	var ue *cli.UsageError
	require.ErrorAs(t, resetOut(foreign), &ue)
	assert.FileExists(t, filepath.Join(foreign, "notes.txt"))

	own := filepath.Join(t.TempDir(), "demo-out")
	require.NoError(t, resetOut(own), "absent")
	require.NoError(t, os.WriteFile(filepath.Join(own, "old.log"), nil, 0o644))
	require.NoError(t, resetOut(own), "made by the demo")
	assert.NoFileExists(t, filepath.Join(own, "old.log"))
	assert.FileExists(t, filepath.Join(own, outMarker))
}
