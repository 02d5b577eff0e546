// Command runner is the control repo side: it assembles the context, runs the
// agent behind the permission gate and publishes the checked writes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// app collects the subcommands; each lives in its own file and registers
// itself in init.
var app = &cli.App{Name: "runner", Summary: "assembles, runs and publishes one mention-runner job"}

func main() {
	// Every secret in the environment is redacted by value from all we
	// write: records and comments where they are made, the log stream here.
	redact.AddSecretsFromEnv(os.Environ())
	env := cli.OSEnv()
	env.Stderr = redact.Writer(env.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
