package main

import (
	"context"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

func init() {
	app.Register(&cli.Command{
		Name:    "poll",
		Summary: "poll the bot's notifications until stopped (SIGINT/SIGTERM) or for --for DURATION",
		Run:     runPoll,
	})
}

func runPoll(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "poll", "[flags]")
	f := addSettings(fs)
	window := fs.Duration("for", 0, "stop cleanly, between two cycles, after this long (e.g. 5h50m for a scheduled job; 0 = until stopped)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if *window < 0 {
		return cli.Usagef("--for=%s: want a positive duration, like 5h50m", *window)
	}
	c, err := f.resolve(env, "poll", false)
	if err != nil {
		return err
	}
	d, gh, err := c.build(env, false)
	if err != nil {
		return err
	}
	p := &dispatch.Poller{D: d, Client: gh, MinInterval: c.pollInterval}
	if *window > 0 {
		p.Until = time.Now().Add(*window)
	}
	return p.Run(ctx)
}
