package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/engine"
)

// ReadOnlyTools are the built-in tools offered to the model (--tools):
// they read files and change nothing. Everything else (Bash, Edit, Write,
// WebFetch…) is not even offered unless Spec.AllowedTools names it.
var ReadOnlyTools = []string{"Read", "Glob", "Grep"}

// GateTools are the gate's tools as Claude Code names them.
var GateTools = func() []string {
	out := make([]string, len(contract.GateTools))
	for i, t := range contract.GateTools {
		out[i] = contract.EngineToolName(t)
	}
	return out
}()

// OfferedTools is the --tools list: the read-only tools plus the built-in
// tools the spec's extras name ("Edit", or "Bash" for "Bash(git commit:*)").
func OfferedTools(extra []string) []string {
	var names []string
	for _, t := range extra {
		name, _, _ := strings.Cut(strings.TrimSpace(t), "(")
		if name != "" && !strings.HasPrefix(name, "mcp__") {
			names = append(names, name)
		}
	}
	return dedupe(ReadOnlyTools, names)
}

// AllowedTools is the --allowedTools list: the gate's tools, reading
// inside workDir (rules scoped to it, so files elsewhere on the machine
// stay unreadable), then the spec's extras.
func AllowedTools(workDir string, extra []string) []string {
	var scoped []string
	if workDir != "" {
		for _, t := range ReadOnlyTools {
			scoped = append(scoped, t+"(/"+filepath.Clean(workDir)+"/**)")
		}
	}
	return dedupe(GateTools, scoped, extra)
}

func dedupe(lists ...[]string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, list := range lists {
		for _, t := range list {
			if t = strings.TrimSpace(t); t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// Args is Claude Code's command line for spec: print mode with stream-json
// (which needs --verbose), only the gate as MCP server, dontAsk so anything
// not allowed is refused rather than prompted for, the tools offered and
// the explicit allow rules, the turn limit and the optional budget and
// model. The prompt goes on stdin.
func Args(spec engine.Spec, mcpConfig string) []string {
	args := []string{
		"-p", "--verbose", "--output-format", "stream-json",
		"--mcp-config", mcpConfig, "--strict-mcp-config",
		"--permission-mode", "dontAsk",
		"--tools", strings.Join(OfferedTools(spec.AllowedTools), ","),
		"--allowedTools", strings.Join(AllowedTools(spec.WorkDir, spec.AllowedTools), ","),
	}
	if spec.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(spec.MaxTurns))
	}
	if spec.MaxBudgetUSD > 0 {
		args = append(args, "--max-budget-usd", strconv.FormatFloat(spec.MaxBudgetUSD, 'f', -1, 64))
	}
	if spec.Model != "" {
		args = append(args, "--model", spec.Model)
	}
	return args
}

// mcpConfig is the --mcp-config file: one stdio server named gate.
type mcpConfig struct {
	MCPServers map[string]mcpServer `json:"mcpServers"`
}

type mcpServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// WriteMCPConfig writes the --mcp-config file that starts the gate with
// argv (command first).
func WriteMCPConfig(path string, argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return fmt.Errorf("mcp config: the gate command is empty")
	}
	cfg := mcpConfig{MCPServers: map[string]mcpServer{
		contract.GateServer: {Type: "stdio", Command: argv[0], Args: append([]string{}, argv[1:]...)},
	}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("mcp config: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("mcp config: %w", err)
	}
	return nil
}
