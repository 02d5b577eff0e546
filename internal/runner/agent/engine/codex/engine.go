// Package codex is the engine that runs the OpenAI Codex CLI
// non-interactively (`codex exec --json`): the prompt on stdin, its JSONL
// event stream parsed as it arrives, the gate as its only MCP server and
// every built-in ability that reaches past the gate (shell, web search,
// images, sub-agents, plugins, hooks, skills, memories) switched off.
//
// Isolation: Codex runs in an empty working directory the engine makes,
// not in the checkout, so no project file (AGENTS.md, .codex/config.toml,
// .codex/hooks.json, .agents/skills, .rules, .env) is ever discovered;
// CODEX_HOME is a fresh directory under the engine's HOME and
// --ignore-user-config skips even that; every setting comes from the
// command line. Codex writes its session record (the rollout) there, and
// the engine reads the tool searches from it (rollout.go). Its sandbox
// stays read-only over that empty directory, so its own apply_patch
// (offered to some models whatever the configuration) can change
// nothing. Codex reads, and with MR_ALLOWED_TOOLS Edit/Write
// changes, the checkout through the runner's file tools (`runner
// mcp-files`, a second MCP server), which are confined to the checkout by
// the runner; the gate commits the changes for a pull request. The
// sanitized context is given inline in the prompt.
package codex

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/process"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Name is the engine's name (MR_ENGINE).
const Name = "codex"

// Program names Codex in error texts.
const Program = "codex"

// DefaultModel is used when the spec names none. Codex's own default model
// offers tools only through its JavaScript "code mode", which is switched
// off here; this one gets the MCP tools (the gate's, the file tools)
// deferred behind Codex's tool_search, which finds only the tools of the
// servers configured here and is reported by no exec event (Codex
// 0.169.0): the engine reads the searches from the rollout.
const DefaultModel = "gpt-5.5"

// BaseURLEnv in the engine's environment points Codex at another Responses
// API (a proxy, or the tests' fake); Codex itself does not read it.
const BaseURLEnv = "OPENAI_BASE_URL"

// DisabledFeatures are Codex features switched off for every run: each
// gives the model a way to act or read outside the gate, or (shell_snapshot)
// runs a program at start: a login shell (bash -l sourcing the profile and
// rc files) to snapshot the environment for the shell tool, which is off.
var DisabledFeatures = []string{
	"shell_tool", "unified_exec", "code_mode_host", "multi_agent", "goals", "view_image",
	"image_generation", "apps", "plugins", "remote_plugin", "hooks", "memories", "skill_search",
	"skill_mcp_dependency_install", "tool_suggest", "browser_use", "browser_use_external",
	"computer_use", "in_app_browser", "workspace_dependencies", "sleep_tool", "shell_snapshot",
}

// Engine runs Codex. The zero value is not usable; set Bin.
type Engine struct {
	Bin string // the codex executable
	// Retries is how often Codex retries a failed API request or stream;
	// nil leaves Codex's default. Only used with BaseURLEnv.
	Retries *int
	// Grace and StderrTail: see process.Spec.
	Grace      time.Duration
	StderrTail int
}

// New returns an engine running bin.
func New(bin string) *Engine { return &Engine{Bin: bin} }

// Name is "codex".
func (e *Engine) Name() string { return Name }

// Args is Codex's command line: exec with JSONL events, the prompt on
// stdin, in workDir, not ephemeral (the engine reads the tool searches
// from the rollout), no user config or exec-policy rules, a read-only
// sandbox, never asking for approval, no web search, no project
// docs, the features above off, the gate as the only MCP server (its tools
// approved: the gate itself decides), and the model and provider.
func (e *Engine) Args(spec engine.Spec, workDir, baseURL string, files []string) []string {
	args := []string{"exec", "--json", "--color", "never", "--skip-git-repo-check",
		"--ignore-user-config", "--ignore-rules", "-C", workDir, "-s", "read-only",
		"-c", `approval_policy="never"`, "-c", `web_search="disabled"`, "-c", "project_doc_max_bytes=0",
		"-c", `history.persistence="none"`, "-c", "check_for_update_on_startup=false",
		"-c", "include_apply_patch_tool=false",
		"-c", "mcp_servers." + contract.GateServer + "=" + serverTOML(spec.GateCommand),
	}
	if len(files) > 0 {
		args = append(args, "-c", "mcp_servers."+contract.FilesServer+"="+serverTOML(files))
	}
	for _, f := range DisabledFeatures {
		args = append(args, "--disable", f)
	}
	if baseURL != "" {
		p := `{name="mention-runner",base_url=` + tomlString(strings.TrimRight(baseURL, "/")) +
			`,env_key="OPENAI_API_KEY",wire_api="responses"`
		if e.Retries != nil {
			n := strconv.Itoa(*e.Retries)
			p += ",request_max_retries=" + n + ",stream_max_retries=" + n
		}
		args = append(args, "-c", `model_provider="mention-runner"`, "-c", "model_providers.mention-runner="+p+"}")
	}
	return append(args, "-m", cmp.Or(spec.Model, DefaultModel), "-")
}

// serverTOML is an MCP server entry (the gate, the file tools) as an
// inline TOML table; its tools are approved: the server itself decides.
func serverTOML(argv []string) string {
	var args []string
	for _, a := range argv[1:] {
		args = append(args, tomlString(a))
	}
	return "{command=" + tomlString(argv[0]) + ",args=[" + strings.Join(args, ",") +
		`],default_tools_approval_mode="approve",startup_timeout_sec=30}`
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Prompt is spec's prompt with how to reach the checkout (when there is
// one) and the sanitized context inline, since the file tools reach only
// the checkout.
func Prompt(spec engine.Spec, checkout, write bool) (string, error) {
	p := spec.Prompt + engine.FilesNote(spec.WorkDir, checkout, write, func(t string) string { return "mcp__" + contract.FilesServer + "__" + t })
	if spec.ContextFile == "" {
		return p, nil
	}
	b, err := os.ReadFile(spec.ContextFile)
	if err != nil {
		return "", fmt.Errorf("read the context for the prompt: %w", err)
	}
	return p + "\nThe data file `" + spec.ContextFile + "` is not in the checkout; it follows in full:\n\n````json\n" +
		strings.TrimRight(string(b), "\n") + "\n````\n", nil
}

// Run starts Codex and blocks until it ends or ctx is done (see
// engine.Engine). Codex has no turn limit of its own: the engine stops it
// when the model would start a turn past spec.MaxTurns and reports
// error_max_turns; a response that only searches is a turn too.
func (e *Engine) Run(ctx context.Context, spec engine.Spec, sink engine.Sink) (*session.Result, error) {
	tools, files, err := engine.FileToolsSetup(Name, e.Bin, spec)
	if err != nil {
		return nil, err
	}
	prompt, err := Prompt(spec, files != nil, engine.CanWrite(tools))
	if err != nil {
		return nil, fmt.Errorf("codex engine: %w", err)
	}
	home, workDir, err := process.WorkDir(spec.Env)
	if err != nil {
		return nil, fmt.Errorf("codex engine: %w", err)
	}
	env, codexHome, err := isolatedEnv(spec.Env, home)
	if err != nil {
		return nil, fmt.Errorf("codex engine: %w", err)
	}

	m := newMapper(cmp.Or(spec.Model, DefaultModel))
	side := func(ctx context.Context, emit func([]session.Event)) { m.tailRollout(ctx, codexHome, emit) }
	return process.RunStream(ctx, process.Stream{Program: Program, Map: m.Map, MaxTurns: spec.MaxTurns, Side: side,
		Spec: process.Spec{Bin: NativeBin(e.Bin), Args: e.Args(spec, workDir, process.Lookup(env, BaseURLEnv), files), Dir: workDir,
			Env: env, Stdin: strings.NewReader(prompt), Grace: e.Grace, StderrTail: e.StderrTail}}, sink)
}

// isolatedEnv is env with CODEX_HOME set to a fresh directory under home
// (which the runner made for this run), and that directory.
func isolatedEnv(env []string, home string) ([]string, string, error) {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return nil, "", err
	}
	return process.SetEnv(env, "CODEX_HOME", codexHome), codexHome, nil
}
