package main

import (
	"context"
	"encoding/json"
	"os/exec"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
)

func init() {
	app.Register(&cli.Command{
		Name:    "measure",
		Summary: "run a command (output discarded) and print its wall time, CPU time and peak RSS as JSON",
		Run:     runMeasure,
	})
}

// runMeasure is the helper behind benchreport.Measure: a fresh, small
// process, so the peak RSS the kernel reports for the command it starts
// is the command's own (Linux folds the starting process's peak into it).
func runMeasure(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "benchreport", "measure", "-- COMMAND [ARG…]")
	if err := cli.ParseFlags(fs, args, true); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return cli.Usagef("give the command to run after --")
	}
	cmd := exec.CommandContext(ctx, rest[0], rest[1:]...)
	cmd.Stderr = env.Stderr
	u, err := benchreport.RunChild(ctx, cmd)
	if err != nil {
		return err
	}
	return json.NewEncoder(env.Stdout).Encode(u)
}
