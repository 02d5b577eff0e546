package main

import (
	"context"
	"errors"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/clock"
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
	maddr := metricsAddr(fs, env, "/healthz and /metrics (off when empty)")
	grace := fs.Duration("stop-grace", 25*time.Second, "on SIGTERM/SIGINT, how long the cycle under way may run on to finish its claims before it is cancelled")
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
	var m *monitor
	if *maddr != "" {
		// GitHub's X-Poll-Interval (60 s) may stretch the wait between
		// cycles past --poll-interval: two of the longer are healthy.
		m = newMonitor(c.pollInterval, 2*max(c.pollInterval, time.Minute))
	}
	d, gh, err := c.buildWatched(env, false, m, "poll")
	if err != nil {
		return err
	}
	p := &dispatch.Poller{D: d, Client: gh, MinInterval: c.pollInterval}
	sleep := clock.Sleep
	if m != nil {
		stop, err := m.start(ctx, *maddr, logger(env), gh, c.control)
		if err != nil {
			return err
		}
		defer stop()
		m.cycleStart = m.now()
		sleep = m.sleep(clock.Sleep)
	}
	if *window > 0 {
		p.Until = time.Now().Add(*window)
	}
	// A stop signal ends the loop between two cycles: the cycle under way
	// runs on (for at most --stop-grace) so each mention it claimed is
	// dispatched or released, not left to its claim's lease.
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()
	go func() {
		select {
		case <-ctx.Done():
		case <-runCtx.Done():
			return
		}
		t := time.NewTimer(*grace)
		defer t.Stop()
		select {
		case <-t.C:
			logger(env).Warn("stop grace over; cancelling the cycle under way", "grace", grace.String())
			cancelRun()
		case <-runCtx.Done():
		}
	}()
	p.Sleep = func(_ context.Context, d time.Duration) error {
		err := sleep(ctx, d)
		if ctx.Err() != nil {
			cancelRun()
			return ctx.Err()
		}
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	err = p.Run(runCtx)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
