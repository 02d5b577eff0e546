package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/cli"
)

func TestTopLevel(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"--help"}, 0, "Commands:"},
		{[]string{"--version"}, 0, "dispatcher "},
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
