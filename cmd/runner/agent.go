package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/sethvargo/go-githubactions"

	"github.com/mention-runner/mention-runner/internal/agent"
	"github.com/mention-runner/mention-runner/internal/cli"
	"github.com/mention-runner/mention-runner/internal/config"
	"github.com/mention-runner/mention-runner/internal/record"
)

func init() {
	app.Register(&cli.Command{
		Name:    "agent",
		Summary: "run the agent behind the permission gate and record the run (no token)",
		Run:     runAgent,
	})
}

// runAgent is the untrusted stage: settings come from the environment (see
// internal/config); it reads no token. Exit 1 when the run failed; the run
// record (outcome.json, run.json) says why.
func runAgent(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "agent", "(settings come from the environment)", config.EnvHelp("agent"))
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	cfg, err := config.Load(env.Env)
	if err != nil {
		return err
	}
	out, dir, err := agent.Run(ctx, agent.Options{Config: cfg, Getenv: env.Env, Environ: os.Environ(), Log: env.Stderr})
	if out != nil {
		setOutputs(env, out, dir)
		fmt.Fprintf(env.Stdout, "run %s %s: %d turns, %d outputs queued; record in %s\n", out.RunID, out.Status, out.Turns, out.Outputs, dir)
	}
	var re *agent.RunError
	if errors.As(err, &re) {
		return &cli.ExitError{Code: 1, Err: err}
	}
	return err
}

// setOutputs sets the step's outputs when running as an Action step.
func setOutputs(env *cli.Env, out *record.Outcome, dir string) {
	if env.Env("GITHUB_OUTPUT") == "" {
		return
	}
	gh := githubactions.New(githubactions.WithGetenv(env.Env), githubactions.WithWriter(env.Stdout))
	gh.SetOutput("status", out.Status)
	gh.SetOutput("failure", out.Failure)
	gh.SetOutput("run_id", out.RunID)
	gh.SetOutput("run_dir", dir)
}
