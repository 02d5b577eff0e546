package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
)

func init() {
	app.Register(&cli.Command{
		Name:    "serve",
		Summary: "serve GitHub webhooks (POST /webhook, GET /healthz) until stopped",
		Run:     runServe,
	})
}

func runServe(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "serve", "[--addr :8080] [flags]")
	addr := fs.String("addr", ":8080", "listen address")
	timeout := fs.Duration("handle-timeout", 60*time.Second, "longest time spent on one delivery (GitHub stops waiting after 10s; work continues)")
	maddr := metricsAddr(fs, env, "/healthz and /metrics besides the webhook listener's /healthz")
	f := addSettings(fs)
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	c, err := f.resolve(env, "serve", false)
	if err != nil {
		return err
	}
	m := newMonitor(c.pollInterval, 0)
	d, gh, err := c.buildWatched(env, false, m, "serve")
	if err != nil {
		return err
	}
	stopMonitor, err := m.start(ctx, *maddr, logger(env), gh, c.control)
	if err != nil {
		return err
	}
	defer stopMonitor()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	hook := d.WebhookHandler([]byte(c.secret), *timeout)
	mx := http.NewServeMux()
	mx.HandleFunc("GET /healthz", m.serveHealth)
	mx.Handle("/", hook)
	srv := &http.Server{Handler: mx,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	logger(env).Info("serving webhooks", "addr", ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	// The rate state is written every CacheTTL, and once more after the
	// last delivery finished.
	fctx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	flushed := make(chan struct{})
	go func() { d.FlushEvery(fctx, 0); close(flushed) }()
	defer func() { stopFlush(); <-flushed }()
	// Claims, and their job states, are swept at start and hourly, as a
	// poller does: nothing else in a webhook-only deployment sweeps them,
	// and the runner's fallback sweep stays out while these sweeps keep
	// the sweep marker fresh.
	sctx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { d.SweepEvery(sctx, 0, nil); close(swept) }()
	defer func() { stopSweep(); <-swept }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Let deliveries in flight finish their dispatches.
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *timeout+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
