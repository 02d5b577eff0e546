package main

import (
	"context"

	"github.com/mention-runner/mention-runner/internal/cli"
	"github.com/mention-runner/mention-runner/internal/dispatch"
)

func init() {
	app.Register(&cli.Command{
		Name:    "poll",
		Summary: "poll the bot's notifications until stopped (SIGINT/SIGTERM)",
		Run:     runPoll,
	})
}

func runPoll(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "poll", "[flags]")
	f := addSettings(fs)
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	c, err := f.resolve(env, "poll", false)
	if err != nil {
		return err
	}
	d, gh, err := c.build(env, false)
	if err != nil {
		return err
	}
	return (&dispatch.Poller{D: d, Client: gh, MinInterval: c.pollInterval}).Run(ctx)
}
