package claudetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GateLogEnv, when set in a test binary's environment, makes
// ServeGateIfAsked run the fake gate MCP server on stdio, logging each call
// as a JSON line to the file it names.
const GateLogEnv = "CLAUDETEST_GATE_LOG"

// GateDenyWord in an add_comment body makes the fake gate refuse the call
// with an IsError result naming the here-only policy.
const GateDenyWord = "DENY"

// GateCall is one tool call the fake gate received.
type GateCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

type commentArgs struct {
	Body string `json:"body" jsonschema:"the comment text"`
}

type noopArgs struct{}

// NewGate builds the fake gate MCP server (name "gate", so Claude Code names
// its tools mcp__gate__add_comment and mcp__gate__noop). Calls are appended
// to logPath.
func NewGate(logPath string) *mcp.Server {
	var mu sync.Mutex
	logCall := func(tool string, args any) error {
		mu.Lock()
		defer mu.Unlock()
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		line, err := json.Marshal(GateCall{Tool: tool, Args: b})
		if err != nil {
			return err
		}
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "gate", Version: "test"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: contract.ToolAddComment, Description: "Post a comment on the current thread."},
		func(_ context.Context, _ *mcp.CallToolRequest, in commentArgs) (*mcp.CallToolResult, any, error) {
			if err := logCall(contract.ToolAddComment, in); err != nil {
				return nil, nil, fmt.Errorf("log call: %w", err)
			}
			if strings.Contains(in.Body, GateDenyWord) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
					Text: "denied by policy: here-only allows comments on the current thread only"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: "comment queued as output #1"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: contract.ToolNoop, Description: "Do nothing."},
		func(_ context.Context, _ *mcp.CallToolRequest, in noopArgs) (*mcp.CallToolResult, any, error) {
			if err := logCall(contract.ToolNoop, in); err != nil {
				return nil, nil, fmt.Errorf("log call: %w", err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	return srv
}

// ServeGateIfAsked runs the fake gate on stdio and exits the process when
// GateLogEnv is set; otherwise it returns at once. Call it first in
// TestMain so the test binary can be re-executed as the MCP server.
func ServeGateIfAsked() {
	logPath := os.Getenv(GateLogEnv)
	if logPath == "" {
		return
	}
	if err := NewGate(logPath).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake gate:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// WriteGateConfig writes an --mcp-config file that starts this test binary
// as the fake gate server, and returns its path and the call log's path.
func WriteGateConfig(dir string) (configPath, logPath string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("gate config: %w", err)
	}
	logPath = filepath.Join(dir, "gate-calls.jsonl")
	cfg := map[string]any{"mcpServers": map[string]any{"gate": map[string]any{
		"type": "stdio", "command": self, "args": []string{},
		"env": map[string]string{GateLogEnv: logPath},
	}}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("gate config: %w", err)
	}
	configPath = filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(configPath, b, 0o644); err != nil {
		return "", "", fmt.Errorf("gate config: %w", err)
	}
	return configPath, logPath, nil
}

// ReadGateCalls reads the fake gate's call log (none yet is not an error).
func ReadGateCalls(logPath string) ([]GateCall, error) {
	b, err := os.ReadFile(logPath)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read gate log: %w", err)
	}
	var calls []GateCall
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var c GateCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("gate log line %q: %w", line, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}
