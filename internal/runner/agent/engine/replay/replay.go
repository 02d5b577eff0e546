// Package replay is the scripted engine: it plays a JSONL script of
// assistant text, gate tool calls (over the real MCP protocol, against the
// real gate subprocess), shell commands, sleeps and crashes, and reports
// them as the same session events the claude engine produces. The demo and
// the runner's tests use it in place of a model.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/mention-runner/mention-runner/internal/core/clock"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Name is the engine's name (MR_ENGINE=replay).
const Name = "replay"

// CrashError is a crash step: the engine died with this message.
type CrashError struct{ Msg string }

func (e *CrashError) Error() string { return "replay engine crashed: " + e.Msg }

// Engine plays one script. It is safe to Run more than once.
type Engine struct {
	steps []Step
	now   func() time.Time
}

var _ engine.Engine = (*Engine)(nil)

// New reads and checks the script at scriptPath, so a bad script fails
// before the run starts.
func New(scriptPath string) (*Engine, error) {
	f, err := os.Open(scriptPath)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	steps, err := ParseScript(f)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", scriptPath, err)
	}
	return FromSteps(steps), nil
}

// FromSteps builds an engine from parsed steps.
func FromSteps(steps []Step) *Engine { return &Engine{steps: steps, now: time.Now} }

// Name implements engine.Engine.
func (e *Engine) Name() string { return Name }

// run is the state of one Run.
type run struct {
	e       *Engine
	spec    engine.Spec
	sink    engine.Sink
	model   string
	gate    *gateConn
	calls   int
	denials []string
}

// Run plays the script. Events go to sink in order. It returns the final
// result (error_max_turns when the script needs more than spec.MaxTurns
// turns), or a nil result and an error when a crash step is reached or ctx
// ends (then every child process group is killed first).
func (e *Engine) Run(ctx context.Context, spec engine.Spec, sink engine.Sink) (*session.Result, error) {
	start := time.Now()
	r := &run{e: e, spec: spec, sink: sink, model: spec.Model}
	if r.model == "" {
		r.model = "replay"
	}
	init := &session.Init{SessionID: uuid.NewString(), Model: r.model, CWD: spec.WorkDir, Tools: append([]string{}, spec.AllowedTools...)}
	var gateErr error
	if len(spec.GateCommand) > 0 {
		g, err := startGate(ctx, spec)
		status := "connected"
		if err != nil {
			// Claude Code reports a server that failed to start and goes on
			// without its tools; so do we (the calls then fail visibly).
			status, gateErr = "failed", err
		} else {
			r.gate = g
			defer g.close()
			for _, t := range g.tools {
				init.Tools = append(init.Tools, contract.EngineToolName(t))
			}
		}
		init.MCPServers = []session.MCPServer{{Name: contract.GateServer, Status: status}}
	}
	r.emit(session.Event{Kind: session.EventInit, Model: r.model, Init: init})
	if gateErr != nil {
		r.emit(session.Event{Kind: session.EventUnknown, Text: "gate MCP server failed to start: " + gateErr.Error()})
	}
	// The prompt is not echoed (Claude Code does not either): the record's
	// [User] turn is the trigger's task, which the agent stage adds.

	turnOf := turns(e.steps)
	turn, last := 0, ""
	for i, s := range e.steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("replay: stopped: %w", err)
		}
		if turnOf[i] > turn {
			turn = turnOf[i]
			if spec.MaxTurns > 0 && turn > spec.MaxTurns {
				res := r.result(start, "error_max_turns", true, turn, fmt.Sprintf("Reached maximum number of turns (%d)", spec.MaxTurns))
				return res, nil
			}
		}
		msgID := fmt.Sprintf("msg_replay_%03d", turn)
		switch s.Kind {
		case StepText:
			r.emit(session.Event{Kind: session.EventText, MessageID: msgID, Model: r.model, Text: s.Text})
			last = s.Text
		case StepTool:
			r.toolCall(ctx, msgID, contract.EngineToolName(s.Tool), s.Args, func() (string, bool) { return r.callGate(ctx, s) })
		case StepBash:
			input, _ := json.Marshal(map[string]string{"command": s.Text})
			r.toolCall(ctx, msgID, "Bash", input, func() (string, bool) { return r.bash(ctx, s.Text) })
		case StepSleep:
			if err := clock.Sleep(ctx, time.Duration(s.SleepMS)*time.Millisecond); err != nil {
				return nil, fmt.Errorf("replay: stopped: %w", err)
			}
		case StepCrash:
			return nil, &CrashError{Msg: s.Text}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("replay: stopped: %w", err)
	}
	return r.result(start, "success", false, turn, last), nil
}

// toolCall emits tool_use, runs do, and emits its tool_result.
func (r *run) toolCall(ctx context.Context, msgID, name string, input json.RawMessage, do func() (string, bool)) {
	r.calls++
	id := fmt.Sprintf("toolu_replay_%03d", r.calls)
	r.emit(session.Event{Kind: session.EventToolUse, MessageID: msgID, Model: r.model, ToolCallID: id, ToolName: name, Input: input})
	out, isErr := do()
	if ctx.Err() != nil {
		return // stopped mid-call: no result, as when Claude Code is killed
	}
	r.emit(session.Event{Kind: session.EventToolResult, ToolCallID: id, Output: out, IsError: isErr})
}

func (r *run) result(start time.Time, subtype string, isErr bool, turns int, text string) *session.Result {
	zero := 0.0
	res := &session.Result{Subtype: subtype, IsError: isErr, NumTurns: turns, DurationMS: time.Since(start).Milliseconds(),
		TotalCostUSD: &zero, Text: text, PermissionDenials: r.denials}
	if subtype == "error_max_turns" {
		// as streamjson reads Claude Code's: the reason in errors and text
		res.Errors = []string{text}
	}
	r.emit(session.Event{Kind: session.EventResult, IsError: isErr, Result: res})
	return res
}

func (r *run) emit(ev session.Event) {
	ev.Time = r.e.now().UTC()
	if r.sink != nil {
		r.sink(ev)
	}
}

// callGate performs a tool step against the gate.
func (r *run) callGate(ctx context.Context, s Step) (string, bool) {
	name := contract.EngineToolName(s.Tool)
	if r.gate == nil || !r.gate.has(s.Tool) {
		return "<tool_use_error>Error: No such tool available: " + name + "</tool_use_error>", true
	}
	out, isErr, err := r.gate.call(ctx, s.Tool, s.Args)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", true
		}
		return "Error: MCP tool " + name + ": " + err.Error(), true
	}
	return out, isErr
}
