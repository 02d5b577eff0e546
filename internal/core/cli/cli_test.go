package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func testApp() *App {
	a := &App{Name: "tool", Summary: "does things"}
	a.Register(&Command{Name: "greet", Summary: "say hello", Run: func(_ context.Context, env *Env, args []string) error {
		fs := FlagSet(env, "tool", "greet", "[--name N]")
		name := fs.String("name", "world", "who to greet")
		if err := ParseFlags(fs, args, false); err != nil {
			return err
		}
		if *name == "boom" {
			return &ExitError{Code: 3, Err: errors.New("exploded")}
		}
		if *name == "fail" {
			return errors.New("plain failure")
		}
		env.Stdout.Write([]byte("hello " + *name + "\n"))
		return nil
	}})
	return a
}

func TestAppMain(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   []string
		noStderr string
	}{
		{"ok", []string{"greet", "--name", "bob"}, 0, "hello bob\n", nil, ""},
		{"help", []string{"--help"}, 0, "", nil, ""},
		{"command help", []string{"greet", "--help"}, 0, "Usage: tool greet [--name N]\n\nFlags:\n  -name string\n    \twho to greet (default \"world\")\n", nil, "Usage:"},
		{"version", []string{"--version"}, 0, "tool dev\n", nil, ""},
		{"no args", nil, 2, "", []string{"Usage:", "greet"}, ""},
		{"unknown command", []string{"wave"}, 2, "", []string{`unknown command "wave"`, "Commands:"}, ""},
		{"unknown flag prints the error and a hint", []string{"greet", "--nmae", "x"}, 2, "", []string{"flag provided but not defined: -nmae", "Run 'tool greet --help' for usage."}, "Usage:"},
		{"extra argument prints the error and a hint", []string{"greet", "extra"}, 2, "", []string{`unexpected argument "extra"`, "Run 'tool greet --help' for usage."}, "Usage:"},
		{"exit error", []string{"greet", "--name", "boom"}, 3, "", []string{"exploded"}, "Usage:"},
		{"plain error", []string{"greet", "--name", "fail"}, 1, "", []string{"plain failure"}, "Usage:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := testApp().Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, c.args)
			assert.Equal(t, c.code, code)
			if c.stdout != "" {
				assert.Equal(t, c.stdout, out.String())
			}
			for _, s := range c.stderr {
				assert.Contains(t, errb.String(), s)
			}
			if c.noStderr != "" {
				assert.NotContains(t, errb.String(), c.noStderr)
			}
		})
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	a := testApp()
	assert.Panics(t, func() { a.Register(&Command{Name: "greet"}) })
}
