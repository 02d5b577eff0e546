package prebuilt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runner"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dispatcher"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain"), []byte("not executable"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, tc := range []struct {
		name    string
		dir     string // $MENTION_RUNNER_TEST_BINS
		cmds    []string
		want    []string
		wantOK  bool
		wantErr string
	}{
		{"unset: the test builds them", "", []string{"dispatcher", "runner"}, nil, false, ""},
		{"found", dir, []string{"dispatcher", "runner"}, []string{filepath.Join(dir, "dispatcher"), filepath.Join(dir, "runner")}, true, ""},
		{"one missing", dir, []string{"runner", "nothere"}, nil, false, "unset it and the test builds nothere itself"},
		{"not executable", dir, []string{"plain"}, nil, false, "not an executable file"},
		{"a directory", dir, []string{"sub"}, nil, false, "not an executable file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(Env, tc.dir)
			got, ok, err := Commands(tc.cmds...)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Contains(t, err.Error(), Env, "the message names the variable to fix")
				assert.False(t, ok)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCommandsRelativeDirIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runner"), []byte("#!/bin/sh\n"), 0o755))
	t.Chdir(dir)
	t.Setenv(Env, ".")
	got, ok, err := Commands("runner")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []string{filepath.Join(dir, "runner")}, got, "tests run commands from other directories")
}
