package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
)

func TestTableUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string // BENCH_RENDER_MB
		code int
		want string
	}{
		{"bad size in the environment", []string{"table"}, "abc", 2, `BENCH_RENDER_MB="abc"`},
		{"zero size in the environment", []string{"table"}, "0", 2, "--render-mb"},
		{"unknown section", []string{"table", "--only", "nope"}, "", 2, `unknown section "nope"`},
		{"bad size", []string{"table", "--render-mb", "0"}, "", 2, "--render-mb"},
		{"stray argument", []string{"table", "extra"}, "", 2, "unexpected argument"},
		{"help", []string{"table", "--help"}, "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string {
					if k == "BENCH_RENDER_MB" {
						return tc.env
					}
					return ""
				}}, tc.args)
			assert.Equal(t, tc.code, code, errb.String())
			assert.Contains(t, errb.String(), tc.want)
		})
	}
}

func TestPick(t *testing.T) {
	all, err := pick("")
	assert.NoError(t, err)
	assert.Len(t, all, len(sections))
	some, err := pick("render, launch")
	assert.NoError(t, err)
	assert.Equal(t, map[string]bool{"render": true, "launch": true}, some)
}

// TestMeasure: the helper runs a command and reports what it cost as the
// JSON benchreport.Measure reads; a failing command is an error.
func TestMeasure(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	var out, errb bytes.Buffer
	code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb},
		[]string{"measure", "--", self, "-test.run=^$"})
	require.Equal(t, 0, code, errb.String())
	var u benchreport.Usage
	require.NoError(t, json.Unmarshal(out.Bytes(), &u))
	assert.Positive(t, u.Wall)
	assert.Positive(t, u.MaxRSSKiB)

	out.Reset()
	code = app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb},
		[]string{"measure", "--", self, "-test.run=^$", "-test.badflag"})
	assert.Equal(t, 1, code)
	assert.Empty(t, out.String())
}
