package actions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetOutputRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	env := map[string]string{"GITHUB_OUTPUT": path}
	var log bytes.Buffer
	tk := New(func(k string) string { return env[k] }, &log)
	require.NoError(t, tk.SetOutput("ready", "true"))
	require.NoError(t, tk.SetOutput("multi", "a\nb"))
	require.NoError(t, tk.SetOutput("ready", "false"))
	got, err := ReadOutputs(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ready": "false", "multi": "a\nb"}, got)
	assert.Empty(t, log.String())
}

func TestSetOutputWithoutFile(t *testing.T) {
	var log bytes.Buffer
	tk := New(func(string) string { return "" }, &log)
	require.NoError(t, tk.SetOutput("jobid", "x"))
	assert.Equal(t, "output jobid=x\n", log.String())
	assert.Error(t, tk.SetOutput("bad=name", "x"))
}

func TestSetOutputUnwritable(t *testing.T) {
	dir := t.TempDir()
	tk := New(func(string) string { return dir }, &bytes.Buffer{}) // a directory cannot be appended to
	assert.ErrorContains(t, tk.SetOutput("ready", "true"), "set output ready")
}

func TestLogLines(t *testing.T) {
	var log bytes.Buffer
	tk := New(func(string) string { return "" }, &log)
	tk.Infof("stored shard %d of %d", 1, 3)
	tk.Errorf("bad\nthing")
	assert.Equal(t, "stored shard 1 of 3\n::error::bad%0Athing\n", log.String())
}

func TestParseOutputs(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{"plain", "a=1\nb=x=y\n", map[string]string{"a": "1", "b": "x=y"}, ""},
		{"heredoc", "a<<EOF\nl1\nl2\nEOF\n", map[string]string{"a": "l1\nl2"}, ""},
		{"crlf", "a=1\r\n", map[string]string{"a": "1"}, ""},
		{"unclosed", "a<<EOF\nl1\n", nil, "no closing delimiter"},
		{"garbage", "nonsense\n", nil, "want name=value"},
		{"empty name", "=v\n", nil, "want name=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOutputs([]byte(tt.in))
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseOutputs(f *testing.F) {
	for _, s := range []string{"a=1\n", "a<<D\nx\nD\n", "a<<\n", "<<D\nD\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseOutputs(data) // must not panic
	})
}

func TestReadOutputsMissing(t *testing.T) {
	_, err := ReadOutputs(filepath.Join(t.TempDir(), "nope"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
