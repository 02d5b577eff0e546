package record

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/render/turns"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Builder turns the engine's event stream into the session projection
// (session.json) while recording what happened: skill.indexed/loaded when
// the engine starts, tool.started, tool.completed/failed with durations,
// one logs/tools.jsonl line per call. Safe for concurrent use.
type Builder struct {
	r *Recorder

	mu       sync.Mutex
	s        session.Session
	asm      *turns.Assembler
	done     []session.TurnProjection
	started  map[string]string // call id → its tool.started event id
	ended    bool              // the engine reported its result
	finished bool
	window   int // the model's context window, once the engine reports it
}

// NewBuilder starts from s (id, intent, user, created_at…; turns are
// replaced by what the events build).
func NewBuilder(r *Recorder, s session.Session) *Builder {
	s.Turns = nil
	if s.Status == "" {
		s.Status = session.StatusCreated
	}
	return &Builder{r: r, s: s, asm: turns.New(0), started: map[string]string{}}
}

// argsExcerptBytes bounds the arguments copied into a tool.started event.
const argsExcerptBytes = 4096

// Add takes one engine event.
func (b *Builder) Add(ev session.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return fmt.Errorf("record: builder already finished")
	}
	if b.s.Status == session.StatusCreated {
		b.s.Status = session.StatusRunning
	}
	if !ev.Time.IsZero() {
		b.s.UpdatedAt = ev.Time.UTC()
	}
	ch := b.asm.Add(ev)
	b.done = append(b.done, b.asm.Released()...)
	switch ev.Kind {
	case session.EventInit:
		return b.init(ev.Init)
	case session.EventUserText:
		if b.s.Intent == "" {
			b.s.Intent = firstRunes(ev.Text, 200)
		}
	case session.EventToolUse:
		return b.toolStarted(ch)
	case session.EventToolResult:
		return b.toolEnded(ev, ch)
	case session.EventResult:
		return b.result(ev.Result)
	}
	return nil
}

func (b *Builder) init(in *session.Init) error {
	if in == nil {
		in = &session.Init{}
	}
	if in.Model != "" {
		m := in.Model
		b.s.Model = &m
	}
	tools := in.Tools
	if tools == nil {
		tools = []string{}
	}
	servers := in.MCPServers
	if servers == nil {
		servers = []session.MCPServer{}
	}
	if _, err := b.r.Emit(contract.EventSkillIndexed, "engine", SeverityInfo,
		fmt.Sprintf("%d tools and %d MCP servers available", len(tools), len(servers)),
		map[string]any{"tools": tools, "mcp_servers": servers, "model": in.Model, "engine_session_id": in.SessionID}); err != nil {
		return err
	}
	for _, s := range servers {
		sev, sum := SeverityInfo, "MCP server "+s.Name+" "+s.Status
		if s.Status != "connected" {
			sev = SeverityWarning
		}
		if _, err := b.r.Emit(contract.EventSkillLoaded, "engine", sev, sum, map[string]any{"name": s.Name, "kind": "mcp_server", "status": s.Status}); err != nil {
			return err
		}
	}
	return nil
}

func (b *Builder) toolStarted(ch turns.Change) error {
	if ch.Duplicate {
		_, err := b.r.Emit(contract.EventToolDuplicate, "engine", SeverityWarning, "tool call id used twice; the second call was ignored", nil)
		return err
	}
	c := ch.Started
	if c == nil {
		return nil
	}
	var args any = json.RawMessage(c.Arguments)
	if len(c.Arguments) > argsExcerptBytes || !json.Valid([]byte(c.Arguments)) {
		args = Excerpt(c.Arguments)
	}
	id, err := b.r.Emit(contract.EventToolStarted, "engine", SeverityInfo, c.ToolName+" started",
		map[string]any{"name": c.ToolName, "arguments": args}, Correlation(c.ID))
	if err != nil {
		return err
	}
	b.started[c.ID] = id
	return nil
}

func (b *Builder) toolEnded(ev session.Event, ch turns.Change) error {
	if ch.Orphan {
		_, err := b.r.Emit(contract.EventToolOrphanResult, "engine", SeverityWarning,
			"tool result for an unknown call "+ev.ToolCallID, map[string]any{"tool_call_id": ev.ToolCallID}, Correlation(ev.ToolCallID))
		return err
	}
	c := ch.Completed
	if c == nil {
		return nil
	}
	typ, sev, verb := contract.EventToolCompleted, SeverityInfo, " completed"
	if c.Status == session.ToolError {
		typ, sev, verb = contract.EventToolFailed, SeverityWarning, " failed"
	}
	opts := []Opt{Correlation(c.ID)}
	if p := b.started[c.ID]; p != "" {
		opts = append(opts, Parent(p))
		delete(b.started, c.ID)
	}
	if _, err := b.r.Emit(typ, "tool", sev, c.ToolName+verb,
		map[string]any{"name": c.ToolName, "status": c.Status, "duration_ms": c.DurationMS, "result_excerpt": firstRunes(ev.Output, 200)}, opts...); err != nil {
		return err
	}
	return b.r.Tool(toolRecord(*c))
}

func (b *Builder) result(res *session.Result) error {
	b.ended = true
	if res == nil {
		res = &session.Result{}
	}
	if res.ContextWindow > 0 {
		b.window = res.ContextWindow
	}
	b.s.Status = session.StatusCompleted
	sev := SeverityInfo
	if res.IsError {
		b.s.Status = session.StatusFailed
		sev = SeverityError
	}
	_, err := b.r.Emit(contract.EventEngineResult, "engine", sev, "engine finished: "+nonEmpty(res.Subtype, "no subtype"),
		map[string]any{"subtype": res.Subtype, "is_error": res.IsError, "num_turns": res.NumTurns, "duration_ms": res.DurationMS,
			"total_cost_usd": res.TotalCostUSD, "permission_denials": res.PermissionDenials})
	return err
}

// Finish ends the stream: calls that never got a result are recorded as
// cancelled (nothing runs them any more, whether the engine ended the
// session, crashed or was stopped). Without a result from the engine the
// session stays running; the caller knows why it ended and sets the
// status (SetStatus).
func (b *Builder) Finish() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return nil
	}
	b.finished = true
	open := b.asm.Flush(session.ToolCancelled)
	b.done = append(b.done, b.asm.Released()...)
	for _, c := range open {
		if err := b.r.Tool(toolRecord(c)); err != nil {
			return err
		}
	}
	return nil
}

// SetStatus sets the session's status (core-types Session Status) once
// the caller knows how the run ended.
func (b *Builder) SetStatus(status string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s.Status = status
}

// Session is a snapshot of the session so far. Every turn carries the
// model's context window once the engine has reported it.
func (b *Builder) Session() session.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.s
	s.Turns = append(append([]session.TurnProjection{}, b.done...), b.asm.Pending()...)
	if b.window > 0 {
		for i := range s.Turns {
			if s.Turns[i].ContextWindow == 0 {
				s.Turns[i].ContextWindow = b.window
			}
		}
	}
	return s
}

// WriteSessionJSON writes the session (redacted, indented) to path,
// replacing it whole (write to a temporary file, then rename).
func (b *Builder) WriteSessionJSON(path string) error {
	return WriteSessionJSON(path, b.Session())
}

// WriteSessionJSON writes s to path, redacted.
func WriteSessionJSON(path string, s session.Session) error { return WriteSessionJSONFS(nil, path, s) }

// WriteSessionJSONFS is WriteSessionJSON through fsys (nil = the OS).
func WriteSessionJSONFS(fsys localfs.FS, path string, s session.Session) error {
	if s.Turns == nil {
		s.Turns = []session.TurnProjection{}
	}
	return WriteJSONFS(fsys, path, s)
}

func toolRecord(c session.ToolCallProjection) ToolRecord {
	res, _ := c.Result.(string)
	return ToolRecord{ID: c.ID, Name: c.ToolName, Arguments: json.RawMessage(c.Arguments),
		Status: c.Status, ResultExcerpt: Excerpt(res), DurationMS: c.DurationMS}
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
