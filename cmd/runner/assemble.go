package main

import (
	"context"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/runner/assemble"
	"github.com/mention-runner/mention-runner/internal/runner/config"
)

func init() {
	app.Register(&cli.Command{
		Name:    "assemble",
		Summary: "reassemble the dispatched context, open the run-log issue and set the step outputs",
		Run:     runAssemble,
	})
}

// runAssemble takes everything from the environment (GITHUB_EVENT_PATH,
// GITHUB_TOKEN, GITHUB_OUTPUT and the settings of internal/runner/config).
func runAssemble(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "assemble", "(settings come from the environment)", config.EnvHelp("assemble"))
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	_, err := assemble.Run(ctx, assemble.Options{Getenv: env.Env, Stdout: env.Stdout})
	return err
}
