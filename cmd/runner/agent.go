package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/sethvargo/go-githubactions"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent"
	"github.com/mention-runner/mention-runner/internal/runner/config"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

func init() {
	app.Register(&cli.Command{
		Name:    "agent",
		Summary: "run the agent behind the permission gate and record the run (no token)",
		Run:     runAgent,
	})
}

// runAgent is the untrusted stage: settings come from the environment (see
// internal/runner/config); it reads no token. Exit 1 when the run failed; the run
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
	// Before anything else is written, while the disk still takes it.
	stepOutputs(env, map[string]string{contract.AgentStageOutput: contract.AgentStageStarted})
	out, dir, err := agent.Run(ctx, agent.Options{Config: cfg, Getenv: env.Env, Environ: os.Environ(), Log: env.Stderr})
	// Every file of the run directory is uploaded as the run-* artifact.
	if dir != "" {
		if rerr := record.RedactDir(dir); rerr != nil {
			fmt.Fprintf(env.Stderr, "agent: %v\n", rerr)
		}
	}
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
	stepOutputs(env, map[string]string{"status": out.Status, "failure": out.Failure, "run_id": out.RunID, "run_dir": dir})
}

// stepOutputs sets step outputs when running as an Action step.
func stepOutputs(env *cli.Env, kv map[string]string) {
	if env.Env("GITHUB_OUTPUT") == "" {
		return
	}
	gh := githubactions.New(githubactions.WithGetenv(env.Env), githubactions.WithWriter(env.Stdout))
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		gh.SetOutput(k, kv[k])
	}
}
