// Package gatetest lets a test binary act as the gate MCP server, so tests
// can start the real gate as a subprocess without building the runner:
// call ServeIfAsked first thing in TestMain and use Command as the
// engine's GateCommand (with Env added to the engine's environment).
package gatetest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
)

// Env is what to add to the child's environment: the switch that makes
// ServeIfAsked serve, and no 1-second race-detector sleep at exit.
var Env = []string{envKey + "=1", "GORACE=atexit_sleep_ms=0"}

const envKey = "MR_GATETEST_SERVE"

// Command is the argv that starts this test binary as the gate for the
// config file at path (same shape as `runner mcp --config path`).
func Command(path string) []string {
	return []string{os.Args[0], "mcp", "--config", path}
}

// ServeIfAsked serves the gate on stdio and exits when the process was
// started by Command with Env set; otherwise it returns at once.
func ServeIfAsked() {
	if os.Getenv(envKey) != "1" {
		return
	}
	a := os.Args
	if len(a) != 4 || a[1] != "mcp" || a[2] != "--config" {
		fmt.Fprintf(os.Stderr, "gatetest: want mcp --config FILE, got %q\n", a[1:])
		os.Exit(2)
	}
	cfg, err := gate.LoadConfig(a[3])
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = gate.Serve(ctx, cfg, "test", &mcp.StdioTransport{})
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gatetest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
