package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

func init() {
	app.Register(&cli.Command{
		Name:    "once",
		Summary: "run one notifications poll cycle, print each decision as a JSON line, and exit",
		Run:     runOnce,
	})
}

func runOnce(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "once", "[flags]")
	f := addSettings(fs)
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	c, err := f.resolve(env, "once", false)
	if err != nil {
		return err
	}
	d, gh, err := c.build(env, false)
	if err != nil {
		return err
	}
	p := &dispatch.Poller{D: d, Client: gh, MinInterval: c.pollInterval}
	res, err := p.Once(ctx)
	enc := json.NewEncoder(env.Stdout)
	for _, dec := range res.Decisions {
		if werr := enc.Encode(dec); werr != nil {
			return fmt.Errorf("write decision: %w", werr)
		}
	}
	if err != nil {
		return fmt.Errorf("poll cycle: %d thread(s) left unread for the next run: %w", res.Failed, err)
	}
	return nil
}
