// Package gemini is the engine that runs the Gemini CLI headless (`-o
// stream-json`): the prompt on stdin, its JSONL event stream parsed as it
// arrives, the gate and the runner's file tools as its only MCP servers,
// and of its own tools only read_file in an allow-list.
//
// Isolation: every setting comes from the user settings file the engine
// writes under the fresh HOME (a system settings file under a world-writable
// /tmp would be skipped by the CLI; the operator's own system settings stay
// in force). The CLI runs in an empty working directory the engine makes,
// trusted and holding only a copy of the sanitized context, so there are no
// workspace settings to override ours, and no .gemini/ directory (commands,
// agents, skills, extensions, policies), .env or memory file of the target
// repository is ever read. The checkout is deliberately not part of the
// workspace: Gemini CLI 0.61.0 loads GEMINI.md from every workspace
// directory and from every directory a tool reads ("JIT context"), and
// offers no setting to stop it, so a workspace holding the checkout would
// let the repository instruct the model. The checkout is read, and with
// MR_ALLOWED_TOOLS Edit/Write changed, through the runner's file tools
// (`runner mcp-files`, a second MCP server confined to the checkout by the
// runner), which load nothing; the gate commits the changes for a pull
// request. The CLI's own read tools see only the context copy.
package gemini

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/process"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Name is the engine's name (MR_ENGINE).
const Name = "gemini"

// Program names the Gemini CLI in errors.
const Program = "gemini cli"

// DefaultModel is used when the spec names none ("auto" would route each
// turn through an extra classifier call).
const DefaultModel = "gemini-2.5-pro"

// ReadOnlyTools are the built-in tools offered: read_file, for the copy of
// the context in the working directory, which resolves and checks its one
// path against the workspace. The CLI's glob and grep_search check only
// the directory they start from, not where a pattern leads ("../../**"
// lists files anywhere on the machine), so they are not offered, nor is
// list_directory: the checkout is searched and listed through the
// runner's file tools, confined by an os.Root (TestGeminiOwnToolsConfined).
var ReadOnlyTools = []string{"read_file"}

// GateTools are the gate's tools as the Gemini CLI names them.
var GateTools = func() []string {
	out := make([]string, len(contract.GateTools))
	for i, t := range contract.GateTools {
		out[i] = "mcp_" + contract.GateServer + "_" + t
	}
	return out
}()

// Engine runs the Gemini CLI. The zero value is not usable; set Bin.
type Engine struct {
	Bin string // the gemini executable
	// Grace and StderrTail: see process.Spec.
	Grace      time.Duration
	StderrTail int
}

// New returns an engine running bin.
func New(bin string) *Engine { return &Engine{Bin: bin} }

// Name is "gemini".
func (e *Engine) Name() string { return Name }

// ToolName is how the Gemini CLI names a tool of one of the runner's MCP
// servers (mcp_gate_add_comment, mcp_files_read_file).
func ToolName(server, tool string) string { return "mcp_" + server + "_" + tool }

// Tools is the tools.core allow-list: the read-only tools, the gate's and
// the given file tools.
func Tools(fileTools []string) []string {
	out := append(append([]string{}, ReadOnlyTools...), GateTools...)
	for _, t := range fileTools {
		out = append(out, ToolName(contract.FilesServer, t))
	}
	return out
}

// Settings is the settings file for spec: API-key auth, the gate as the
// only MCP server (trusted: the gate itself decides), the tool allow-list,
// no context files (memoryFile is a name no repository has), no hooks,
// skills, sub-agents, checkpoints, telemetry or update checks, and no
// loop detection of its own (the runner's applies to every engine).
func Settings(spec engine.Spec, memoryFile string, files, fileTools []string) map[string]any {
	servers := map[string]any{contract.GateServer: map[string]any{
		"command": spec.GateCommand[0], "args": spec.GateCommand[1:], "trust": true, "timeout": 600000}}
	allowed := []string{contract.GateServer}
	if len(files) > 0 {
		servers[contract.FilesServer] = map[string]any{"command": files[0], "args": files[1:], "trust": true, "timeout": 600000}
		allowed = append(allowed, contract.FilesServer)
	} else {
		fileTools = nil
	}
	return map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": true}},
		"mcpServers": servers,
		"mcp":        map[string]any{"allowed": allowed},
		"tools":      map[string]any{"core": Tools(fileTools), "useRipgrep": false},
		"context": map[string]any{"fileName": []string{memoryFile}, "loadMemoryFromIncludeDirectories": false,
			"discoveryMaxDirs": 1},
		"privacy":     map[string]any{"usageStatisticsEnabled": false},
		"telemetry":   map[string]any{"enabled": false},
		"general":     map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "checkpointing": map[string]any{"enabled": false}},
		"hooksConfig": map[string]any{"enabled": false},
		// the runner detects loops itself (MR_LOOP_THRESHOLD) and reports them
		"model":        map[string]any{"disableLoopDetection": true},
		"skills":       map[string]any{"enabled": false},
		"experimental": map[string]any{"enableAgents": false},
	}
}

// Args is the CLI's command line: headless with stream-json, the model,
// default approval mode (so nothing outside the allow-list runs), only the
// gate's MCP server, and a one-line prompt that points at the full prompt
// on stdin.
func Args(spec engine.Spec, files bool) []string {
	servers := contract.GateServer
	if files {
		servers += "," + contract.FilesServer
	}
	return []string{"-o", "stream-json", "-m", cmp.Or(spec.Model, DefaultModel), "--approval-mode", "default",
		"--allowed-mcp-server-names", servers, "-p", "Do the task described above."}
}

// Run starts the Gemini CLI and blocks until it ends or ctx is done (see
// engine.Engine). The engine enforces spec.MaxTurns itself and reports
// error_max_turns.
func (e *Engine) Run(ctx context.Context, spec engine.Spec, sink engine.Sink) (*session.Result, error) {
	fileTools, files, err := engine.FileToolsSetup(Name, e.Bin, spec)
	if err != nil {
		return nil, err
	}
	env, workDir, err := prepare(spec, files, fileTools)
	if err != nil {
		return nil, fmt.Errorf("gemini engine: %w", err)
	}
	prompt := spec.Prompt
	if spec.ContextFile != "" {
		prompt += "\n\nFor your read_file tool the data file is at `" + filepath.Join(workDir, filepath.Base(spec.ContextFile)) + "`."
	}
	prompt += engine.FilesNote(spec.WorkDir, files != nil, engine.CanWrite(fileTools), func(t string) string { return ToolName(contract.FilesServer, t) })
	m := newMapper(cmp.Or(spec.Model, DefaultModel))
	return process.RunStream(ctx, process.Stream{Program: Program, Map: m.Map, Flush: m.Flush, MaxTurns: spec.MaxTurns,
		Spec: process.Spec{Bin: e.Bin, Args: Args(spec, files != nil), Dir: workDir, Env: env,
			Stdin: strings.NewReader(prompt), Grace: e.Grace, StderrTail: e.StderrTail}}, sink)
}

// prepare makes the empty working directory with a copy of the context,
// writes the settings under the fresh HOME, and returns the CLI's
// environment.
func prepare(spec engine.Spec, files, fileTools []string) (env []string, workDir string, err error) {
	home, workDir, err := process.WorkDir(spec.Env)
	if err != nil {
		return nil, "", err
	}
	nonce := make([]byte, 12)
	if _, err := rand.Read(nonce); err != nil {
		return nil, "", err
	}
	b, err := json.MarshalIndent(Settings(spec, ".mention-runner-no-memory-"+hex.EncodeToString(nonce)+".md", files, fileTools), "", "  ")
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o600); err != nil {
		return nil, "", err
	}
	if spec.ContextFile != "" {
		data, err := os.ReadFile(spec.ContextFile)
		if err != nil {
			return nil, "", fmt.Errorf("copy the context: %w", err)
		}
		if err := os.WriteFile(filepath.Join(workDir, filepath.Base(spec.ContextFile)), data, 0o600); err != nil {
			return nil, "", fmt.Errorf("copy the context: %w", err)
		}
	}
	env = spec.Env
	for _, kv := range [][2]string{
		{"GEMINI_CLI_TRUST_WORKSPACE", "true"}, // the empty working directory, not the checkout
		{"GEMINI_CLI_NO_RELAUNCH", "true"},
	} {
		env = process.SetEnv(env, kv[0], kv[1])
	}
	return env, workDir, nil
}
