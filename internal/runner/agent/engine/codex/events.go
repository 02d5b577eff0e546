package codex

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Mapping of `codex exec --json` lines (checked against Codex 0.169.0):
//
//	thread.started                          → EventInit (session id)
//	item.started   mcp_tool_call            → EventToolUse mcp__<server>__<tool>
//	item.completed mcp_tool_call            → EventToolResult (failed → IsError)
//	item.started   command_execution        → EventToolUse "shell"
//	item.completed command_execution        → EventToolResult (exit code ≠ 0 → IsError)
//	item.completed file_change / web_search → EventToolUse + EventToolResult
//	item.completed agent_message            → EventText
//	item.completed reasoning                → EventThinking
//	item.completed error                    → EventUnknown (a warning)
//	turn.completed                          → EventResult success (usage)
//	turn.failed, error (fatal)              → EventResult error with the message
//	anything else                           → EventUnknown
//
// Codex reports no message ids: a new assistant message starts after
// every tool result, so each model response is one turn. It reports
// nothing for a tool_search call (how gpt-5.5 finds the MCP tools): those
// come from Codex's rollout (rollout.go), mapped to a tool use of
// SearchTool and its result, so a response that only searches is a turn
// too.

// ShellTool is the name Codex's shell command items get in the record.
const ShellTool = "shell"

type line struct {
	Type     string                    `json:"type"`
	ThreadID string                    `json:"thread_id"`
	Message  string                    `json:"message"`
	Item     *item                     `json:"item"`
	Usage    *usage                    `json:"usage"`
	Error    *struct{ Message string } `json:"error"`
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type item struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Message   string          `json:"message"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error            *struct{ Message string } `json:"error"`
	Status           string                    `json:"status"`
	Command          string                    `json:"command"`
	AggregatedOutput string                    `json:"aggregated_output"`
	ExitCode         *int                      `json:"exit_code"`
	Changes          json.RawMessage           `json:"changes"`
	Query            string                    `json:"query"`
}

// mapper is the stateful LineMapper for one run.
type mapper struct {
	mu      sync.Mutex // Map runs on the stream's goroutine, rolloutMap on the tail's
	model   string
	msgs    engine.Messages
	started map[string]bool
	done    map[string]bool // searches whose output was reported
	text    []string        // agent messages, the last is the result text
}

func newMapper(model string) *mapper {
	return &mapper{model: model, msgs: engine.Messages{Prefix: "codex_msg_"}, started: map[string]bool{}, done: map[string]bool{}}
}

// Map implements streamjson.LineMapper.
func (m *mapper) Map(raw []byte, n int, now time.Time) []session.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return []session.Event{streamjson.Unknown(raw, fmt.Sprintf("codex line %d: malformed JSON: %v", n, err), now)}
	}
	switch l.Type {
	case "thread.started":
		return []session.Event{{Kind: session.EventInit, Time: now, Model: m.model,
			Init: &session.Init{SessionID: l.ThreadID, Model: m.model}}}
	case "item.started", "item.updated", "item.completed":
		if l.Item != nil {
			return m.item(l.Type == "item.completed", l.Type == "item.started", l.Item, raw, now)
		}
	case "turn.completed":
		r := &session.Result{Subtype: "success", NumTurns: m.msgs.Turns(), Text: m.lastText()}
		ev := session.Event{Kind: session.EventResult, Time: now, Result: r}
		if l.Usage != nil {
			ev.Usage = &session.Usage{InputTokens: l.Usage.InputTokens, OutputTokens: l.Usage.OutputTokens}
		}
		return []session.Event{ev}
	case "turn.failed":
		msg := "turn failed"
		if l.Error != nil && l.Error.Message != "" {
			msg = l.Error.Message
		}
		return []session.Event{{Kind: session.EventResult, Time: now, IsError: true,
			Result: &session.Result{Subtype: "error_during_execution", IsError: true, NumTurns: m.msgs.Turns(), Text: msg}}}
	case "error":
		// retries ("Reconnecting… 2/5") and the final error before
		// turn.failed: kept, the result carries the verdict
		return []session.Event{streamjson.Unknown(raw, "codex error: "+l.Message, now)}
	}
	return []session.Event{streamjson.Unknown(raw, "codex "+l.Type, now)}
}

func (m *mapper) lastText() string {
	if len(m.text) == 0 {
		return ""
	}
	return m.text[len(m.text)-1]
}

func (m *mapper) item(done, started bool, it *item, raw []byte, now time.Time) []session.Event {
	var name string
	var input json.RawMessage
	switch it.Type {
	case "agent_message":
		if !done {
			return nil
		}
		m.text = append(m.text, it.Text)
		return []session.Event{{Kind: session.EventText, Time: now, MessageID: m.msgs.ID(), Model: m.model, Text: it.Text}}
	case "reasoning":
		if !done {
			return nil
		}
		return []session.Event{{Kind: session.EventThinking, Time: now, MessageID: m.msgs.ID(), Model: m.model, Text: it.Text}}
	case "mcp_tool_call":
		name, input = "mcp__"+it.Server+"__"+it.Tool, it.Arguments
	case "command_execution":
		name, input = ShellTool, mustJSON(map[string]string{"command": it.Command})
	case "file_change":
		name, input = "file_change", it.Changes
	case "web_search":
		name, input = "web_search", mustJSON(map[string]string{"query": it.Query})
	case "error":
		return []session.Event{streamjson.Unknown(raw, "codex warning: "+it.Message, now)}
	default:
		return []session.Event{streamjson.Unknown(raw, "codex item "+it.Type, now)}
	}
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	var out []session.Event
	if !m.started[it.ID] {
		m.started[it.ID] = true
		out = append(out, session.Event{Kind: session.EventToolUse, Time: now, MessageID: m.msgs.ID(), Model: m.model,
			ToolCallID: it.ID, ToolName: name, Input: input})
	}
	if !done {
		return out
	}
	m.msgs.End()
	return append(out, session.Event{Kind: session.EventToolResult, Time: now, ToolCallID: it.ID,
		Output: it.output(), IsError: it.failed()})
}

func (it *item) output() string {
	switch {
	case it.Type == "command_execution":
		return it.AggregatedOutput
	case it.Result != nil && len(it.Result.Content) > 0:
		var parts []string
		for _, c := range it.Result.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			} else {
				parts = append(parts, "["+c.Type+"]")
			}
		}
		return strings.Join(parts, "\n")
	case it.Error != nil:
		return it.Error.Message
	}
	return ""
}

func (it *item) failed() bool {
	if it.Error != nil || it.Status == "failed" || it.Status == "declined" {
		return true
	}
	return it.ExitCode != nil && *it.ExitCode != 0
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
