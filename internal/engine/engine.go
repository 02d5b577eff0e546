// Package engine is the interface every agent engine (claude, codex, gemini, replay) meets:
// the runner's agent mode hands it a Spec and receives session events.
package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/session"
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

// CheckNoExtraTools refuses a spec that asks an engine without edit
// support for extra tools (MR_ALLOWED_TOOLS: edits, shell for pull
// requests): silently running without them would hide a misconfiguration.
// Read rules (the runner adds one for the context file) are fine: these
// engines read the context their own way.
func CheckNoExtraTools(name string, allowed []string) error {
	var extra []string
	for _, t := range allowed {
		t = strings.TrimSpace(t)
		if t != "" && !strings.HasPrefix(t, "Read(") && t != "Read" {
			extra = append(extra, t)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("engine %s cannot use MR_ALLOWED_TOOLS (%s): it has no file editing or shell in this runner; "+
			"only engine claude can prepare pull requests", name, strings.Join(extra, ", "))
	}
	return nil
}
