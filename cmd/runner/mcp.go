package main

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
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
	fs := cli.FlagSet(env, "runner", "mcp", "--config FILE", MCPSettingsHelp)
	cfgPath := fs.String("config", "", "gate config `FILE` (JSON) written by runner agent (required)")
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

// MCPSettingsHelp says where the gate's settings come from.
const MCPSettingsHelp = `Settings come only from the --config file, which ` + "`runner agent`" + ` writes into
the run directory (gate.json): the trigger's !cfg flags, the operator
ceilings, the thread and the opt-out snapshot, from which the gate builds
the same policy publish will. No environment variable is read; the engine
starts this command itself.
`

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
