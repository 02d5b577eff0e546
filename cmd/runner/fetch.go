package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/runner/agent"
	"github.com/mention-runner/mention-runner/internal/runner/checkout"
	"github.com/mention-runner/mention-runner/internal/runner/config"
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
	token := env.Env("BOT_TOKEN")
	m, err := checkout.Fetch(ctx, t, checkout.FetchOptions{ServerURL: cfg.ServerURL, Token: token,
		MaxBytes: int64(cfg.MaxCheckoutBytes), MaxTreeBytes: cfg.MaxTreeBytes, OutDir: cfg.TargetDir})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "fetched %s at %s (branch %s, %d bytes) into %s\n", m.Repo, m.Commit, m.Branch(), m.PackBytes, cfg.TargetDir)
	if !m.IsPR() || m.BaseRef == "" {
		return nil // an issue, or an older context without the base branch: no diff
	}
	// The pull request's diff at the same commit: one read, with the code.
	bot, err := ghclient.New(ghclient.Options{BaseURL: cfg.APIURL, Token: token, UserAgent: "mention-runner/" + cli.Version})
	if err != nil {
		return err
	}
	d, err := threadctx.FetchDiff(ctx, bot, m.Repo, m.BaseRef, m.Commit, cfg.MaxDiffBytes)
	if err != nil {
		return fmt.Errorf("fetch: the pull request's diff at %s: %w", m.Commit, err)
	}
	if err := checkout.WriteDiff(cfg.TargetDir, &m, d); err != nil {
		return err
	}
	if d.Unavailable != "" {
		fmt.Fprintf(env.Stdout, "the server sent no diff against %s (%s); the agent works from the code\n", m.BaseRef, d.Unavailable)
	} else {
		fmt.Fprintf(env.Stdout, "diff against %s: %d of %d bytes\n", m.BaseRef, len(d.Text), d.Total)
	}
	return nil
}
