package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

func init() {
	app.Register(&cli.Command{
		Name:    "event",
		Summary: "handle one webhook event from a file (e.g. $GITHUB_EVENT_PATH) and print the decision JSON",
		Run:     runEvent,
	})
}

func runEvent(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "event", "--name EVENT --payload FILE [--dry-run] [flags]")
	name := fs.String("name", "", "webhook event name, e.g. issue_comment (required)")
	payload := fs.String("payload", "", "path of the event payload JSON (required)")
	dryRun := fs.Bool("dry-run", false, "decide without any API call and print what would be done")
	f := addSettings(fs)
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if *name == "" || *payload == "" {
		return cli.Usagef("--name and --payload are required")
	}
	c, err := f.resolve(env, "event", *dryRun)
	if err != nil {
		return err
	}
	body, err := os.ReadFile(*payload)
	if err != nil {
		return fmt.Errorf("read payload: %w", err)
	}
	enc := json.NewEncoder(env.Stdout)
	t, err := dispatch.DecodeEvent(*name, body)
	if errors.Is(err, webhook.ErrUnsupported) {
		return enc.Encode(dispatch.Decision{Decision: dispatch.Ignore, Reason: err.Error()})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", *payload, err)
	}
	c.flushEach = true // one mention per process: its rate state goes with its last writes
	d, _, err := c.build(env, *dryRun)
	if err != nil {
		return err
	}
	dec, err := d.Handle(ctx, t)
	if ferr := d.Flush(ctx); ferr != nil && err == nil {
		err = ferr
	}
	// No poll cycle follows an event process: one mention in
	// dispatch.EventSweepOneIn sweeps claims unless a dispatcher swept
	// within the hour.
	d.EventSweep(ctx, dec.JobID)
	if werr := enc.Encode(dec); werr != nil {
		return fmt.Errorf("write decision: %w", werr)
	}
	return err
}
