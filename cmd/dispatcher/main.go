// Command dispatcher turns mentions of the bot into repository_dispatch
// events for the control repository.
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
var app = &cli.App{Name: "dispatcher", Summary: "turns @bot mentions into repository_dispatch events"}

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
