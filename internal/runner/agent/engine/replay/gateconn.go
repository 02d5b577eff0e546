package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/process"
)

// gateStartTimeout bounds starting the gate and listing its tools.
const gateStartTimeout = 30 * time.Second

// gateConn is a connected gate subprocess.
type gateConn struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	tools  []string
	stderr *process.Tail
}

// startGate starts spec.GateCommand in its own process group with the
// engine's environment, as Claude Code starts a stdio MCP server.
func startGate(ctx context.Context, spec engine.Spec) (*gateConn, error) {
	cmd := exec.CommandContext(ctx, spec.GateCommand[0], spec.GateCommand[1:]...)
	cmd.Dir = spec.WorkDir
	cmd.Env = nonNil(spec.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 2 * time.Second
	stderr := process.NewTail(process.DefaultStderrTail)
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mention-runner-replay", Version: cli.Version}, nil)
	sctx, cancel := context.WithTimeout(ctx, gateStartTimeout)
	defer cancel()
	cs, err := client.Connect(sctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		if cmd.Process != nil {
			_ = killGroup(cmd)
			_ = cmd.Wait()
		}
		return nil, fmt.Errorf("%s: %w%s", strings.Join(spec.GateCommand, " "), err, stderrSuffix(stderr))
	}
	g := &gateConn{cmd: cmd, cs: cs, stderr: stderr}
	res, err := cs.ListTools(sctx, nil)
	if err != nil {
		g.close()
		return nil, fmt.Errorf("list gate tools: %w%s", err, stderrSuffix(stderr))
	}
	for _, t := range res.Tools {
		g.tools = append(g.tools, t.Name)
	}
	return g, nil
}

func (g *gateConn) has(tool string) bool {
	for _, t := range g.tools {
		if t == tool {
			return true
		}
	}
	return false
}

// call runs one tool and flattens its text content as Claude Code does.
func (g *gateConn) call(ctx context.Context, tool string, args []byte) (string, bool, error) {
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		return "", true, fmt.Errorf("%w%s", err, stderrSuffix(g.stderr))
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		default:
			parts = append(parts, fmt.Sprintf("[%T]", c))
		}
	}
	return strings.Join(parts, "\n"), res.IsError, nil
}

// close ends the session (closing the gate's stdin, then SIGTERM) and
// kills whatever is left of its process group.
func (g *gateConn) close() {
	_ = g.cs.Close()
	_ = killGroup(g.cmd)
}

// killGroup SIGKILLs the command's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// nonNil keeps a nil environment from meaning "inherit ours".
func nonNil(env []string) []string {
	if env == nil {
		return []string{}
	}
	return env
}

// stderrSuffix is " (stderr: …)" for error messages, or "".
func stderrSuffix(t *process.Tail) string {
	if s := strings.TrimSpace(t.String()); s != "" {
		return " (stderr: " + s + ")"
	}
	return ""
}
