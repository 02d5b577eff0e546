package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// sink takes the engine's events in order: the session projection and
// tool records (Builder), loop detection, and the gate's decisions, read
// from its log when a tool result shows the gate has answered.
func (r *run) sink(ev session.Event) {
	switch {
	case ev.Kind == session.EventUserText && r.prompt != "" && strings.Contains(ev.Text, strings.TrimSpace(r.prompt)):
		return // an engine echoing the prompt (the CLI may add its own lines): [User] is the task already
	case ev.Kind == session.EventToolUse && ev.DisplayName == "":
		ev.DisplayName = gate.DisplayName(ev.ToolName) // the gate tools' MCP titles
	}
	if err := r.builder.Add(ev); err != nil {
		r.problems = append(r.problems, err)
	}
	switch ev.Kind {
	case session.EventInit:
		if ev.Init != nil && ev.Init.Model != "" && r.out.Model == "" {
			r.out.Model, r.meta.Model = ev.Init.Model, ev.Init.Model
		}
	case session.EventToolUse:
		r.emitFileRead(ev)
		already := r.loop.Loop() != nil
		if r.loop.Observe(ev.ToolCallID, ev.ToolName, ev.Input) && !already {
			l := r.loop.Loop()
			r.emit(contract.EventLoopDetected, record.SeverityError,
				fmt.Sprintf("%d identical consecutive calls of %s; stopping the engine", l.Count, l.Tool),
				map[string]any{"tool": l.Tool, "arguments": l.Args, "count": l.Count, "calls": l.Calls}, record.Correlation(ev.ToolCallID))
			r.logf("loop detected: %d identical calls of %s; stopping the engine", l.Count, l.Tool)
			r.stop(errLoop)
		}
	case session.EventToolResult:
		r.drainGate(false)
	}
}

// drainGate turns new lines of logs/gate.jsonl into policy.* events. At
// the end (final) a line the gate never finished is reported too.
func (r *run) drainGate(final bool) {
	recs, err := r.gateLog.next()
	for _, g := range recs {
		r.emitGate(g)
	}
	if err != nil {
		r.recordError("gate.log", err.Error(), true)
	}
	if final {
		if rest := r.gateLog.rest(); len(rest) > 0 {
			r.recordError("gate.log", fmt.Sprintf("the gate's last log line was cut short (%d bytes): it was stopped mid-write", len(rest)), true)
		}
	}
}

func (r *run) emitGate(g gate.Record) {
	data := map[string]any{"tool": g.Tool, "arguments": g.Args, "decision": g.Decision, "rule": g.Rule, "reason": g.Reason}
	if g.OutputIndex != nil {
		data["output_index"] = *g.OutputIndex
	}
	switch g.Decision {
	case gate.DecisionAllowed:
		r.emit(contract.EventPolicyAllowed, record.SeverityInfo, g.Tool+" allowed and queued", data)
	case gate.DecisionDenied:
		// the policy working as meant: recorded, never an error
		r.emit(contract.EventPolicyDenied, record.SeverityInfo, g.Tool+" denied: "+firstLine(g.Reason), data)
	case gate.DecisionInvalid:
		r.emit(contract.EventPolicyInvalid, record.SeverityWarning, g.Tool+" refused, invalid arguments: "+firstLine(g.Reason), data)
	default:
		r.emit(contract.EventGateError, record.SeverityError, g.Tool+": the gate failed: "+firstLine(g.Reason), data)
		r.recordError("gate", g.Tool+": "+g.Reason, true)
	}
}

// emit appends an event; a failure is kept and reported at the end rather
// than stopping the run half-recorded.
func (r *run) emit(typ, severity, summary string, data any, opts ...record.Opt) {
	if r.rec == nil {
		return
	}
	if _, err := r.rec.Emit(typ, "runner", severity, summary, data, opts...); err != nil {
		r.problems = append(r.problems, err)
	}
}

func (r *run) recordError(kind, msg string, recoverable bool) {
	if r.rec == nil {
		return
	}
	if err := r.rec.Error(record.ErrorRecord{Kind: kind, Message: msg, Recoverable: recoverable}); err != nil {
		r.problems = append(r.problems, err)
	}
}

// fileReadTools are the engine's tools that read files, with the argument
// naming what they read.
var fileReadTools = map[string]string{"Read": "file_path", "Glob": "pattern", "Grep": "pattern"}

// emitFileRead records a file.read event for an engine tool call that reads
// files, so the timeline shows what the agent looked at.
func (r *run) emitFileRead(ev session.Event) {
	key, ok := fileReadTools[ev.ToolName]
	if !ok {
		return
	}
	var args map[string]any
	if err := json.Unmarshal(ev.Input, &args); err != nil {
		return
	}
	target, _ := args[key].(string)
	r.emit(contract.EventFileRead, record.SeverityInfo, ev.ToolName+" "+target,
		map[string]any{"tool": ev.ToolName, key: target}, record.Correlation(ev.ToolCallID))
}
