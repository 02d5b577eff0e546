// Package turns assembles the engine's event stream into the session's
// turns (core-types TurnProjection): the prompt as a user turn, one
// assistant turn per assistant message, each tool result attached to the
// call that asked for it. The run record (session.json) and the streaming
// markdown renderer share it, so both show the same turns.
package turns

import (
	"encoding/json"
	"fmt"
	fastjson "github.com/segmentio/encoding/json"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Assembler turns events into turns. It is not safe for concurrent use.
//
// A turn is released (handed out by Released) once a later turn has started
// and every tool call in it has its result, in order. With a window, an
// unreleased backlog longer than the window releases its oldest turn anyway,
// so memory stays bounded even when a result never comes; a result arriving
// after its turn was released is an orphan.
type Assembler struct {
	window   int
	next     int // sequence of the next turn
	queue    []*session.TurnProjection
	released []session.TurnProjection
	// calls maps a pending call id to its turn and index in ToolCalls.
	calls map[string]callRef
	// callStart is when each pending call was asked for.
	callStart map[string]int64
	// afterResult: a tool result arrived since the last assistant block, so
	// an assistant block without a message id starts a new turn.
	afterResult bool
	orphans     int
	model       string
	curMsgID    string // message id of the current assistant turn
	// spare turns: a released turn's struct is copied out, so it is reused
	spare []*session.TurnProjection
}

type callRef struct {
	turn  *session.TurnProjection
	index int
}

// New returns an Assembler; window <= 0 keeps every turn until released
// normally or by Flush.
func New(window int) *Assembler {
	return &Assembler{window: window, calls: map[string]callRef{}, callStart: map[string]int64{}}
}

// Change says what one event did, for callers that record it.
type Change struct {
	// Started is the call a tool_use event asked for.
	Started *session.ToolCallProjection
	// Completed is the call a tool_result finished (status done or error).
	Completed *session.ToolCallProjection
	// Orphan: a tool result whose call is unknown or already released.
	Orphan bool
	// Duplicate: a second tool_use with an id already pending; ignored.
	Duplicate bool
}

// Add takes one event.
func (a *Assembler) Add(ev session.Event) Change {
	return a.add(ev, true)
}

// Take is Add for a caller that reads only the released turns (the
// streaming renderer): no Change, so no copies of the calls it names.
func (a *Assembler) Take(ev session.Event) {
	a.add(ev, false)
}

func (a *Assembler) add(ev session.Event, report bool) Change {
	var ch Change
	switch ev.Kind {
	case session.EventInit:
		if ev.Init != nil && ev.Init.Model != "" {
			a.model = ev.Init.Model
		}
	case session.EventUserText:
		t := a.current()
		if t == nil || t.Role != "user" {
			t = a.start("user", ev, "")
		}
		t.Blocks = append(t.Blocks, session.ContentBlock{Type: "text", Content: ev.Text})
		a.touch(t, ev)
	case session.EventText, session.EventThinking:
		t := a.assistant(ev)
		typ := "text"
		if ev.Kind == session.EventThinking {
			typ = "thinking"
		}
		t.Blocks = append(t.Blocks, session.ContentBlock{Type: typ, Content: ev.Text})
		a.touch(t, ev)
	case session.EventToolUse:
		if _, dup := a.calls[ev.ToolCallID]; dup && ev.ToolCallID != "" {
			ch.Duplicate = true
			return ch
		}
		t := a.assistant(ev)
		id := ev.ToolCallID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", t.Sequence, len(t.ToolCalls))
		}
		args := string(ev.Input)
		if args == "" {
			args = "{}"
		}
		name, display := ev.ToolName, ev.DisplayName
		if display == "" {
			display = name
		}
		t.ToolCalls = append(t.ToolCalls, session.ToolCallProjection{
			ID: id, ToolName: name, DisplayName: display, Arguments: args, Status: session.ToolPending,
		})
		names := &toolNames{id, name, display} // one allocation for the three pointers
		t.Blocks = append(t.Blocks, session.ContentBlock{
			Type:       "tool_use",
			Content:    ToolUse{ID: id, Input: toolInput(ev.Input), Name: name},
			ToolCallID: &names.id, ToolName: &names.name, DisplayName: &names.display,
		})
		a.calls[id] = callRef{turn: t, index: len(t.ToolCalls) - 1}
		if !ev.Time.IsZero() {
			a.callStart[id] = ev.Time.UnixMilli()
		}
		a.touch(t, ev)
		if report {
			c := t.ToolCalls[len(t.ToolCalls)-1]
			ch.Started = &c
		}
	case session.EventToolResult:
		a.afterResult = true
		ref, ok := a.calls[ev.ToolCallID]
		if !ok {
			a.orphans++
			ch.Orphan = true
			return ch
		}
		delete(a.calls, ev.ToolCallID)
		c := &ref.turn.ToolCalls[ref.index]
		c.Status = session.ToolDone
		if ev.IsError {
			c.Status = session.ToolError
		}
		c.Result = ev.Output
		if start, ok := a.callStart[ev.ToolCallID]; ok && !ev.Time.IsZero() {
			d := max(ev.Time.UnixMilli()-start, 0)
			c.DurationMS = &d
		}
		delete(a.callStart, ev.ToolCallID)
		a.touch(ref.turn, ev)
		if report {
			done := *c
			ch.Completed = &done
		}
	case session.EventNotice:
		a.notice(ev, ev.Text)
	case session.EventResult:
		a.closeCurrent()
		if ev.Result != nil {
			a.notice(ev, ResultText(*ev.Result))
			a.closeCurrent()
		}
	}
	a.release(false)
	return ch
}

// Released hands out the turns released since the last call, in order.
func (a *Assembler) Released() []session.TurnProjection {
	out := a.released
	a.released = nil
	return out
}

// AppendReleased appends the turns released since the last call to dst,
// like Released but reusing the assembler's array (for a caller that
// copies them out at once).
func (a *Assembler) AppendReleased(dst []session.TurnProjection) []session.TurnProjection {
	dst = append(dst, a.released...)
	clear(a.released)
	a.released = a.released[:0]
	return dst
}

// Pending returns copies of the turns not released yet (for a snapshot).
func (a *Assembler) Pending() []session.TurnProjection {
	out := make([]session.TurnProjection, len(a.queue))
	for i, t := range a.queue {
		out[i] = *t
		out[i].ToolCalls = append([]session.ToolCallProjection(nil), t.ToolCalls...)
		out[i].Blocks = append([]session.ContentBlock(nil), t.Blocks...)
	}
	return out
}

// Flush ends the stream: every remaining turn is released; calls still
// waiting for a result get callStatus (cancelled when the engine ended the
// session, pending when the stream just stopped). It returns those calls.
func (a *Assembler) Flush(callStatus string) []session.ToolCallProjection {
	a.closeCurrent()
	var open []session.ToolCallProjection
	for _, t := range a.queue {
		for i := range t.ToolCalls {
			if t.ToolCalls[i].Status == session.ToolPending {
				t.ToolCalls[i].Status = callStatus
				open = append(open, t.ToolCalls[i])
			}
		}
	}
	a.calls = map[string]callRef{}
	a.callStart = map[string]int64{}
	a.release(true)
	return open
}

func (a *Assembler) current() *session.TurnProjection {
	if n := len(a.queue); n > 0 && a.queue[n-1].Status == "streaming" {
		return a.queue[n-1]
	}
	return nil
}

// assistant returns the assistant turn ev belongs to, starting one if needed.
func (a *Assembler) assistant(ev session.Event) *session.TurnProjection {
	t := a.current()
	var same bool
	if t != nil && t.Role == "assistant" {
		if ev.MessageID != "" {
			same = ev.MessageID == a.curMsgID
		} else {
			// without ids, a tool result is what ends an assistant message
			same = a.curMsgID == "" && !a.afterResult
		}
	}
	a.afterResult = false
	if same {
		return t
	}
	t = a.start("assistant", ev, ev.MessageID)
	a.curMsgID = ev.MessageID
	return t
}

func (a *Assembler) start(role string, ev session.Event, turnID string) *session.TurnProjection {
	a.closeCurrent()
	seq := a.next
	a.next++
	switch {
	case turnID == "":
		turnID = "turn_" + strconv.Itoa(seq)
	case !strings.HasPrefix(turnID, "turn_"):
		turnID = "turn_" + turnID // core-types ids carry their kind
	}
	var t *session.TurnProjection
	if n := len(a.spare); n > 0 {
		t, a.spare = a.spare[n-1], a.spare[:n-1]
	} else {
		t = new(session.TurnProjection)
	}
	*t = session.TurnProjection{
		ID: "entry_" + strconv.Itoa(seq), Sequence: seq, TurnID: turnID, LoopID: "root",
		Kind: "message", Role: role, Status: "streaming",
		Blocks: []session.ContentBlock{}, ToolCalls: []session.ToolCallProjection{},
	}
	if role == "assistant" {
		m := ev.Model
		if m == "" {
			m = a.model
		}
		if m != "" {
			t.Model = &m
		}
	}
	if !ev.Time.IsZero() {
		st := ev.Time.UTC()
		t.StartedAt = &st
	}
	a.queue = append(a.queue, t)
	return t
}

// notice adds a system notification to the current system turn, or to a
// new one.
func (a *Assembler) notice(ev session.Event, text string) {
	t := a.current()
	if t == nil || t.Role != "system" {
		t = a.start("system", ev, "")
	}
	t.Blocks = append(t.Blocks, session.ContentBlock{Type: "system_notification", Content: text})
	a.touch(t, ev)
}

// ResultText is the engine's final result as a reader needs it: how it
// ended, turns, cost and duration on one line, then the engine's own
// error text when it failed.
func ResultText(r session.Result) string {
	var b strings.Builder
	b.WriteString("Result: ")
	if r.IsError {
		b.WriteString("error")
	} else {
		b.WriteString("success")
	}
	if r.Subtype != "" && r.Subtype != "success" {
		b.WriteString(" (" + r.Subtype)
		if r.Subtype == "error_max_turns" {
			b.WriteString(": the turn limit was reached")
		}
		b.WriteString(")")
	}
	if r.NumTurns == 1 {
		b.WriteString(" · 1 turn")
	} else {
		fmt.Fprintf(&b, " · %d turns", r.NumTurns)
	}
	if r.TotalCostUSD != nil {
		b.WriteString(" · $" + strconv.FormatFloat(*r.TotalCostUSD, 'f', -1, 64))
	}
	fmt.Fprintf(&b, " · %.1f s", float64(r.DurationMS)/1000)
	if len(r.PermissionDenials) > 0 {
		b.WriteString(" · refused by the engine: " + strings.Join(r.PermissionDenials, ", "))
	}
	if r.IsError {
		text := strings.Join(r.Errors, "\n")
		if text == "" {
			text = r.Text
		}
		if text = strings.TrimSpace(text); text != "" {
			b.WriteString("\n" + text)
		}
	}
	return b.String()
}

// touch updates usage and duration with an event that belongs to t.
func (a *Assembler) touch(t *session.TurnProjection, ev session.Event) {
	if ev.Usage != nil {
		u := *ev.Usage
		t.Usage = &u
	}
	if t.StartedAt != nil && !ev.Time.IsZero() {
		if d := ev.Time.Sub(*t.StartedAt).Milliseconds(); d > t.DurationMS {
			t.DurationMS = d
		}
	}
}

func (a *Assembler) closeCurrent() {
	if t := a.current(); t != nil {
		t.Status = "completed"
	}
}

// release moves finished turns from the front of the queue to released.
func (a *Assembler) release(all bool) {
	for len(a.queue) > 0 {
		t := a.queue[0]
		ready := all || (t.Status != "streaming" && !hasPending(t))
		forced := a.window > 0 && len(a.queue) > a.window
		if !ready && !forced {
			return
		}
		if forced && !ready {
			a.forget(t)
			if t.Status == "streaming" {
				t.Status = "completed"
			}
		}
		a.released = append(a.released, *t)
		a.queue[0] = nil
		a.queue = a.queue[1:]
		// nothing points at t now: a released turn has no pending call
		// (forget dropped those of a turn released early)
		*t = session.TurnProjection{}
		a.spare = append(a.spare, t)
	}
}

// forget drops the pending calls of a turn released early; their results
// become orphans.
func (a *Assembler) forget(t *session.TurnProjection) {
	for _, c := range t.ToolCalls {
		if c.Status == session.ToolPending {
			delete(a.calls, c.ID)
			delete(a.callStart, c.ID)
		}
	}
}

func hasPending(t *session.TurnProjection) bool {
	for _, c := range t.ToolCalls {
		if c.Status == session.ToolPending {
			return true
		}
	}
	return false
}

type toolNames struct{ id, name, display string }

// ToolUse is the content of a tool_use block. It encodes exactly as the
// map {"id", "input", "name"} it stands for (keys in that order), without
// a map per call.
type ToolUse struct {
	ID    string    `json:"id"`
	Input toolInput `json:"input"`
	Name  string    `json:"name"`
}

// toolInput is a call's input: valid JSON encodes as is, anything else as
// a string, and no input as {}, so session.json always encodes. It is
// checked when it is encoded, not for every call.
type toolInput []byte

func (in toolInput) MarshalJSON() ([]byte, error) {
	switch {
	case len(in) == 0:
		return []byte("{}"), nil
	case fastjson.Valid(in):
		return in, nil
	}
	return json.Marshal(string(in))
}
