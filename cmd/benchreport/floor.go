package main

import (
	"context"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
)

func init() {
	app.Register(&cli.Command{
		Name:    "floor",
		Summary: "run one floor program (transport < context, or render LOG) for make bench to time",
		Run:     runFloor,
	})
}

func runFloor(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "benchreport", "floor", "transport < context.json | render LOG")
	if err := cli.ParseFlags(fs, args, true); err != nil {
		return err
	}
	rest := fs.Args()
	switch {
	case len(rest) == 1 && rest[0] == "transport":
		return benchreport.FloorTransport(env.Stdin, env.Stdout)
	case len(rest) == 2 && rest[0] == "render":
		return benchreport.FloorRender(rest[1])
	}
	return cli.Usagef("want `floor transport` or `floor render LOG`, got %q", fmt.Sprint(rest))
}
