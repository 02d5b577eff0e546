package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
)

// ReadOnlyTools are the built-in tools offered to the model (--tools):
// they read files and change nothing. Everything else (Bash, Edit, Write,
// WebFetch…) is not even offered unless Spec.AllowedTools names it.
// Glob is never offered: its permission check looks at the directory it
// starts from, not where the pattern leads, so an absolute pattern
// ("/tmp/**/outputs.jsonl") lists files anywhere on the machine; Grep's
// files_with_matches lists the checkout instead (TestClaudeOwnToolsConfined).
var ReadOnlyTools = []string{"Read", "Grep"}

// neverOffered are built-in tools not offered even when the spec's extras
// name them: "Glob" there means reading, which Read and Grep do.
var neverOffered = []string{"Glob"}

// GateTools are the gate's tools as Claude Code names them.
var GateTools = func() []string {
	out := make([]string, len(contract.GateTools))
	for i, t := range contract.GateTools {
		out[i] = contract.EngineToolName(t)
	}
	return out
}()

// OfferedTools is the --tools list: the read-only tools plus the built-in
// tools the spec's extras name ("Edit", or "Bash" for "Bash(git commit:*)"),
// never a neverOffered one.
func OfferedTools(extra []string) []string {
	var names []string
	for _, t := range extra {
		name, _, _ := strings.Cut(strings.TrimSpace(t), "(")
		if name != "" && !strings.HasPrefix(name, "mcp__") && !slices.Contains(neverOffered, name) {
			names = append(names, name)
		}
	}
	return dedupe(ReadOnlyTools, names)
}

// FileTools are the built-in tools that take a path; named bare in the
// spec's extras ("Edit"), they are scoped to the checkout like the
// read-only tools, so the file tools never reach outside it.
var FileTools = []string{"Read", "Glob", "Grep", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead"}

// AllowedTools is the --allowedTools list: the gate's tools, reading
// inside workDir (rules scoped to it, so files elsewhere on the machine
// stay unreadable), then the spec's extras, where a bare file tool
// ("Edit", "Write") becomes the same rule scoped to workDir. A rule the
// operator wrote with its own pattern is passed as written.
func AllowedTools(workDir string, extra []string) []string {
	scope := func(tool string) string { return tool + "(/" + filepath.Clean(workDir) + "/**)" }
	var scoped []string
	if workDir != "" {
		for _, t := range ReadOnlyTools {
			scoped = append(scoped, scope(t))
		}
	}
	var rest []string
	for _, t := range extra {
		t = strings.TrimSpace(t)
		if workDir != "" && slices.Contains(FileTools, t) {
			t = scope(t)
		}
		rest = append(rest, t)
	}
	return dedupe(GateTools, scoped, rest)
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
// (which needs --verbose), no setting source at all (no user, project or
// local settings: the target's .claude/ configures nothing) but the
// runner's own settings file, only the gate as MCP server, no slash
// commands or skills, dontAsk so anything not allowed is refused rather
// than prompted for, the tools offered and the explicit allow rules, the
// turn limit and the optional budget and model. The prompt goes on stdin.
func Args(spec engine.Spec, mcpConfig, settings string) []string {
	args := []string{
		"-p", "--verbose", "--output-format", "stream-json",
		"--setting-sources", "", "--settings", settings,
		"--mcp-config", mcpConfig, "--strict-mcp-config",
		"--disable-slash-commands",
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

// settings is the --settings file, the only settings Claude Code reads:
// no hook runs (whatever else might define one), bypassPermissions cannot
// be switched on, project MCP servers are never enabled, and nothing is
// added to commits or pull requests.
var settings = map[string]any{
	"disableAllHooks":            true,
	"enableAllProjectMcpServers": false,
	"includeCoAuthoredBy":        false,
	"permissions": map[string]any{
		"defaultMode":                  "dontAsk",
		"disableBypassPermissionsMode": "disable",
	},
}

// IsolationEnv is set in Claude Code's environment whatever the parent
// says: no CLAUDE.md or other memory file of the target is loaded as
// instructions (the task is the trigger comment alone; the agent may still
// read those files as data), and no auto-memory is kept.
var IsolationEnv = []string{
	"CLAUDE_CODE_DISABLE_CLAUDE_MDS=1",
	"CLAUDE_CODE_DISABLE_AUTO_MEMORY=1",
}

// GateWaitEnv makes Claude Code wait for the gate before the first turn.
// In print mode it connects --mcp-config servers in the background and
// takes its tool list without the ones still starting, never adding them
// later (anthropics/claude-code#74926): on a loaded machine the agent ran
// without the gate (status "pending") and could write nothing. Blocking
// mode waits up to MCP_CONNECT_TIMEOUT_MS (default 5 s, also too short
// there). The gate is a local process that normally answers in
// milliseconds; the limit only bounds a hang.
var GateWaitEnv = []string{"MCP_CONNECTION_NONBLOCKING=0", "MCP_CONNECT_TIMEOUT_MS=120000"}

// WriteSettings writes the --settings file.
func WriteSettings(path string) error {
	if err := writeJSON(path, settings); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

// writeJSON writes v, indented, as the file path (a file Claude Code reads
// from the run directory).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
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
	if err := writeJSON(path, cfg); err != nil {
		return fmt.Errorf("mcp config: %w", err)
	}
	return nil
}
