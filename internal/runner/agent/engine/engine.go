// Package engine is the interface every agent engine (claude, codex, gemini, replay) meets:
// the runner's agent mode hands it a Spec and receives session events.
package engine

import (
	"context"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Spec is everything an engine needs for one run.
type Spec struct {
	Prompt       string
	WorkDir      string   // the target checkout the agent works in
	RunDir       string   // run record dir (outputs.jsonl etc. live here)
	GateCommand  []string // argv that starts the gate MCP server over stdio, e.g. ["/path/runner","mcp","--config","/run/gate.json"]
	Env          []string // the engine's whole environment (already allow-listed by the caller)
	MaxTurns     int
	Model        string
	MaxBudgetUSD float64
	AllowedTools []string // engine-native tool names the agent may use besides the gate's
	// ContextFile is the sanitized context the prompt points at; an engine
	// without a file-reading tool gives it inline.
	ContextFile string
	// FilesCommand is the argv that starts the runner's checkout file tools
	// over stdio (`runner mcp-files --root <checkout>`), for engines that
	// use them (see FileTools); nil = no checkout to read.
	FilesCommand []string
}

// Sink receives engine events; it is called in order, from one goroutine.
type Sink func(session.Event)

// Engine runs one agent session.
type Engine interface {
	Name() string
	// Run blocks until the engine ends or ctx is done (caller enforces the
	// timeout and loop stop by cancelling ctx; the engine must then kill its
	// whole process group and return promptly). Result may be nil when the
	// engine died without one.
	Run(ctx context.Context, spec Spec, sink Sink) (*session.Result, error)
}
