// Command benchreport measures mention-runner's hot paths and prints one
// markdown table (`make bench`). Run it from the repository root.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mention-runner/mention-runner/internal/core/cli"
)

var app = &cli.App{Name: "benchreport", Summary: "measures the named hot paths and prints one markdown table"}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, cli.OSEnv(), os.Args[1:])
	stop()
	os.Exit(code)
}
