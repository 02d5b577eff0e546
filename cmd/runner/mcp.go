package main

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/cli"
	"github.com/mention-runner/mention-runner/internal/gate"
)

func init() {
	app.Register(&cli.Command{
		Name:    "mcp",
		Summary: "serve the permission gate (MCP over stdio) for the agent",
		Run:     runMCP,
	})
}

// runMCP serves the gate on the command's stdin/stdout; stdout carries the
// protocol only, so every diagnostic goes to stderr.
func runMCP(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "mcp", "--config FILE")
	cfgPath := fs.String("config", "", "gate config JSON written by `runner agent` (required)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if *cfgPath == "" {
		return cli.Usagef("--config is required")
	}
	cfg, err := gate.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
	return gate.Serve(ctx, cfg, cli.Version, t)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
