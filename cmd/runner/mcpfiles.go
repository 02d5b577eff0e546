package main

import (
	"context"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/runner/agent/filetools"
)

func init() {
	app.Register(&cli.Command{
		Name:    "mcp-files",
		Summary: "serve the checkout's file tools (MCP over stdio) for the codex and gemini engines",
		Run:     runMCPFiles,
	})
}

// runMCPFiles serves the file tools confined to --root on stdin/stdout.
func runMCPFiles(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "mcp-files", "--root DIR --tools LIST")
	root := fs.String("root", "", "the checkout the tools may use (required)")
	tools := fs.String("tools", "", "comma-separated tools to serve: read_file,list_files,search_files,edit_file,write_file (required)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if *root == "" || *tools == "" {
		return cli.Usagef("--root and --tools are required")
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
	return filetools.Serve(ctx, *root, strings.Split(*tools, ","), cli.Version, t)
}
