package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/dispatcher/doctor"
)

func init() {
	app.Register(&cli.Command{
		Name:    "doctor",
		Summary: "check the setup (token, scopes, control repo, workflow, ALLOWED_USERS) and print ✓/✗ with a fix for each",
		Run:     runDoctor,
	})
}

// runDoctor takes the dispatcher's own settings, so what it checks is what
// the dispatcher would run with. Exit 1 when any check fails.
func runDoctor(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "doctor", "[flags]")
	f := addSettings(fs)
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	c, err := f.resolve(env, "doctor", false)
	if err != nil {
		return err
	}
	cfg := doctor.Config{Bot: c.bot, Control: c.control, AllowedUsers: c.allowedRaw, AllowedSet: c.allowedSet, OwnControl: c.separateControl()}
	for _, m := range c.missing {
		if !strings.HasPrefix(m, "ALLOWED_USERS") { // reported by its own check
			cfg.Missing = append(cfg.Missing, m)
		}
	}
	if c.token != "" {
		gh, ctl, _, _, err := c.clients(logger(env), nil)
		if err != nil {
			return err
		}
		cfg.GitHub, cfg.ControlClient = gh, ctl
		// a pusher of its own, without ForAPI's fall back to the REST API:
		// the check is whether pushing works
		if cfg.Push, err = refpush.New(ctl.Client(), refpush.ServerFromAPI(ctl.BaseURL), c.controlToken); err != nil {
			return err
		}
	}
	rep := doctor.Run(ctx, cfg)
	if err := rep.Print(env.Stdout); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if rep.Failed() > 0 {
		return &cli.ExitError{Code: 1}
	}
	return nil
}
