package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/agent"
	"github.com/mention-runner/mention-runner/internal/checkout"
	"github.com/mention-runner/mention-runner/internal/cli"
	"github.com/mention-runner/mention-runner/internal/config"
)

func init() {
	app.Register(&cli.Command{
		Name:    "fetch",
		Summary: "fetch the code the agent works on with the bot's token (trusted; no agent code runs)",
		Run:     runFetch,
	})
}

// runFetch is the trusted job between assemble and agent: it reads the
// verified context, fetches the PR head at the recorded commit (or the
// default branch) with BOT_TOKEN, shallow and size-capped, and writes the
// pack and manifest into MR_TARGET_DIR for the agent job's artifact.
func runFetch(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "fetch", "(settings come from the environment)", config.EnvHelp("fetch"))
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	cfg, err := config.Load(env.Env)
	if err != nil {
		return err
	}
	if cfg.TargetDir == "" {
		return errors.New("fetch: MR_TARGET_DIR (input target-dir) names no directory to write the code to")
	}
	raw, err := agent.LoadContext(cfg.ContextFile, cfg.ContextSHA256)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	t, err := checkout.FromContext(raw)
	if err != nil {
		return err
	}
	m, err := checkout.Fetch(ctx, t, checkout.FetchOptions{ServerURL: cfg.ServerURL, Token: env.Env("BOT_TOKEN"),
		MaxBytes: int64(cfg.MaxCheckoutBytes), OutDir: cfg.TargetDir})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "fetched %s at %s (branch %s, %d bytes) into %s\n", m.Repo, m.Commit, m.Branch(), m.PackBytes, cfg.TargetDir)
	return nil
}
