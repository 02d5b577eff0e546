package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Mapping of `gemini -o stream-json` lines (checked against Gemini CLI
// 0.61.0):
//
//	init                                  → EventInit
//	message role=user                     → EventUserText
//	message role=assistant (delta chunks) → one EventText per message
//	tool_use                              → EventToolUse
//	tool_result                           → EventToolResult (status error → IsError)
//	result                                → EventResult (status error → IsError)
//	error                                 → EventUnknown (a warning)
//	anything else                         → EventUnknown
//
// Assistant text arrives in delta chunks; they are joined and emitted when
// the next other line arrives (or at Flush). The CLI reports no message
// ids: a new assistant message starts after every tool result.

type line struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     json.RawMessage `json:"output"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int   `json:"input_tokens"`
		OutputTokens int   `json:"output_tokens"`
		DurationMS   int64 `json:"duration_ms"`
	} `json:"stats"`
}

type mapper struct {
	model string
	msgs  engine.Messages
	text  strings.Builder
	at    time.Time
	last  string // last assistant text, the result's text
}

func newMapper(model string) *mapper {
	return &mapper{model: model, msgs: engine.Messages{Prefix: "gemini_msg_"}}
}

// Flush emits assistant text still buffered.
func (m *mapper) Flush() []session.Event {
	if m.text.Len() == 0 {
		return nil
	}
	t := m.text.String()
	m.text.Reset()
	m.last = t
	return []session.Event{{Kind: session.EventText, Time: m.at, MessageID: m.msgs.ID(), Model: m.model, Text: t}}
}

// Map implements streamjson.LineMapper.
func (m *mapper) Map(raw []byte, n int, now time.Time) []session.Event {
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return append(m.Flush(), streamjson.Unknown(raw, fmt.Sprintf("gemini line %d: malformed JSON: %v", n, err), now))
	}
	if l.Type == "message" && l.Role == "assistant" {
		if m.text.Len() == 0 {
			m.at = now
		}
		m.text.WriteString(l.Content)
		return nil
	}
	out := m.Flush()
	switch l.Type {
	case "init":
		if l.Model != "" {
			m.model = l.Model
		}
		return append(out, session.Event{Kind: session.EventInit, Time: now, Model: m.model,
			Init: &session.Init{SessionID: l.SessionID, Model: m.model}})
	case "message":
		return append(out, session.Event{Kind: session.EventUserText, Time: now, Text: l.Content})
	case "tool_use":
		in := l.Parameters
		if len(in) == 0 || string(in) == "null" {
			in = json.RawMessage(`{}`)
		}
		return append(out, session.Event{Kind: session.EventToolUse, Time: now, MessageID: m.msgs.ID(), Model: m.model,
			ToolCallID: l.ToolID, ToolName: l.ToolName, Input: in})
	case "tool_result":
		m.msgs.End()
		text := outputText(l.Output)
		if text == "" && l.Error != nil {
			text = l.Error.Message
		}
		return append(out, session.Event{Kind: session.EventToolResult, Time: now, ToolCallID: l.ToolID,
			Output: text, IsError: l.Status == "error"})
	case "result":
		r := &session.Result{Subtype: "success", NumTurns: m.msgs.Turns(), Text: m.last}
		if l.Status != "success" {
			r.Subtype, r.IsError = "error_during_execution", true
			if l.Error != nil && l.Error.Message != "" {
				r.Text = l.Error.Message
			}
		}
		ev := session.Event{Kind: session.EventResult, Time: now, IsError: r.IsError, Result: r}
		if l.Stats != nil {
			r.DurationMS = l.Stats.DurationMS
			ev.Usage = &session.Usage{InputTokens: l.Stats.InputTokens, OutputTokens: l.Stats.OutputTokens}
		}
		return append(out, ev)
	case "error":
		return append(out, streamjson.Unknown(raw, "gemini "+l.Severity+": "+l.Message, now))
	}
	return append(out, streamjson.Unknown(raw, "gemini "+l.Type, now))
}

func outputText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
