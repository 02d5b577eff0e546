// Package claude is the engine that runs the real Claude Code CLI in print
// mode: the prompt on stdin, stream-json on stdout parsed as it arrives,
// the gate as its only MCP server, and only the gate's and read-only tools
// allowed. The process runs in its own process group, so cancelling the
// context (timeout, loop) stops Claude Code and every MCP server or shell
// it started.
package claude

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/process"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Files written into the run directory: the --mcp-config and --settings
// files (outside the checkout, so the agent cannot change them).
const (
	MCPConfigFile = "mcp.json"
	SettingsFile  = "claude-settings.json"
)

// Engine runs Claude Code. The zero value is not usable; set Bin.
type Engine struct {
	Bin string // the claude executable
	// Grace is how long Claude Code gets after SIGTERM before the group is
	// killed; zero means process.DefaultGrace.
	Grace time.Duration
	// StderrTail is how many bytes of stderr are kept for errors; zero means
	// process.DefaultStderrTail.
	StderrTail int
}

// New returns an engine running bin.
func New(bin string) *Engine { return &Engine{Bin: bin} }

// Name is the engine's name (MR_ENGINE).
const Name = "claude"

// Name is "claude".
func (e *Engine) Name() string { return Name }

// Program names Claude Code in errors.
const Program = "claude code"

// ExitError is Claude Code ending badly (see process.ExitError).
type ExitError = process.ExitError

// Run starts Claude Code and blocks until it ends or ctx is done. Events
// reach sink in stdout order from one goroutine; lines Claude Code adds in
// later versions arrive as EventUnknown. It returns the result event (nil
// when none came), an *ExitError when Claude Code failed, or ctx's error
// (with the result so far) when it was stopped.
func (e *Engine) Run(ctx context.Context, spec engine.Spec, sink engine.Sink) (*session.Result, error) {
	if e.Bin == "" {
		return nil, errors.New("claude engine: no claude executable configured")
	}
	if spec.RunDir == "" {
		return nil, errors.New("claude engine: spec has no run directory")
	}
	mcpPath := filepath.Join(spec.RunDir, MCPConfigFile)
	if err := WriteMCPConfig(mcpPath, spec.GateCommand); err != nil {
		return nil, fmt.Errorf("claude engine: %w", err)
	}
	settingsPath := filepath.Join(spec.RunDir, SettingsFile)
	if err := WriteSettings(settingsPath); err != nil {
		return nil, fmt.Errorf("claude engine: %w", err)
	}
	// IsolationEnv and GateWaitEnv last: they win over anything the parent passed.
	env := append(append(append([]string{}, spec.Env...), IsolationEnv...), GateWaitEnv...)
	return process.RunStream(ctx, process.Stream{Program: Program, Spec: process.Spec{Bin: e.Bin, Args: Args(spec, mcpPath, settingsPath),
		Dir: spec.WorkDir, Env: env, Stdin: strings.NewReader(spec.Prompt), Grace: e.Grace, StderrTail: e.StderrTail}}, sink)
}
