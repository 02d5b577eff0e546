package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/cli"
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
