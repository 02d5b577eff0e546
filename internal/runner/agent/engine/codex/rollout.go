package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Codex's exec --json reports nothing for a tool search (how gpt-5.5
// finds the MCP tools, 0.169.0), so a model response that only searches
// would be no turn: not counted toward MR_MAX_TURNS, unseen by the loop
// detector, absent from the record. Codex's own session record (the
// "rollout", CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl) has every
// response item, tool_search_call and tool_search_output included, each
// written before Codex sends the next request (checked with the real CLI:
// at each request the previous search and its output are on disk). The
// engine tails it beside the exec stream and takes from it the searches
// only; everything else still comes from the stream. CODEX_HOME is the
// fresh directory the engine makes for the run: neither the model nor the
// checkout can write there (read-only sandbox, no shell, file tools
// confined to the checkout).

// SearchTool is the name a tool search gets in the record.
const SearchTool = "tool_search"

// rolloutPoll is how often the rollout is read while Codex runs: a
// search-only model is stopped at most this much after its last allowed
// turn (one read of what was appended; nothing when nothing was).
const rolloutPoll = 20 * time.Millisecond

// rolloutLine is the part of a rollout line the engine reads.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		CallID    string          `json:"call_id"`
		Status    string          `json:"status"`
		Arguments json.RawMessage `json:"arguments"`
		Tools     []searchTool    `json:"tools"`
	} `json:"payload"`
}

type searchTool struct {
	Type  string       `json:"type"`
	Name  string       `json:"name"`
	Tools []searchTool `json:"tools"` // a namespace's (an MCP server's) tools
}

// names are the tools a search found, as the model calls them
// (mcp__<server>__<tool>).
func names(prefix string, tools []searchTool) []string {
	var out []string
	for _, t := range tools {
		if t.Type == "namespace" {
			out = append(out, names(t.Name+"__", t.Tools)...)
			continue
		}
		out = append(out, prefix+t.Name)
	}
	return out
}

// rolloutMap maps one rollout line: a search is a tool use of SearchTool
// with its arguments, its output a tool result naming the tools found.
// Any other line is nil (the exec stream reports it).
func (m *mapper) rolloutMap(raw []byte, now time.Time) []session.Event {
	var l rolloutLine
	if json.Unmarshal(raw, &l) != nil || l.Type != "response_item" || l.Payload.CallID == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := l.Payload
	id := "search_" + p.CallID
	switch p.Type {
	case "tool_search_call":
		if m.started[id] {
			return nil
		}
		m.started[id] = true
		input := p.Arguments
		if len(input) == 0 || input[0] != '{' {
			input = mustJSON(map[string]json.RawMessage{"arguments": input})
		}
		return []session.Event{{Kind: session.EventToolUse, Time: now, MessageID: m.msgs.ID(), Model: m.model,
			ToolCallID: id, ToolName: SearchTool, Input: input}}
	case "tool_search_output":
		if !m.started[id] || m.done[id] {
			return nil
		}
		m.done[id] = true
		m.msgs.End()
		return []session.Event{{Kind: session.EventToolResult, Time: now, ToolCallID: id,
			Output: strings.Join(names("", p.Tools), "\n"), IsError: p.Status != "" && p.Status != "completed"}}
	}
	return nil
}

// tailRollout reads the run's rollout under codexHome as Codex writes it
// and emits its searches, until ctx ends; then it reads what is left and
// returns.
func (m *mapper) tailRollout(ctx context.Context, codexHome string, emit func([]session.Event)) {
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var partial []byte
	read := func() {
		if f == nil {
			found, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
			if len(found) == 0 {
				return
			}
			var err error
			if f, err = os.Open(found[0]); err != nil { // a fresh CODEX_HOME: this run's only session
				return
			}
		}
		// kept open: each read starts where the last ended
		b, _ := io.ReadAll(f) // what was read counts even after an error
		b = append(partial, b...)
		// only whole lines: the last may still be being written
		end := bytes.LastIndexByte(b, '\n') + 1
		partial = append([]byte(nil), b[end:]...)
		now := time.Now()
		for _, ln := range bytes.Split(b[:end], []byte("\n")) {
			// cheap filter: most lines are not searches
			if bytes.Contains(ln, []byte(`"tool_search_`)) {
				if evs := m.rolloutMap(ln, now); len(evs) > 0 {
					emit(evs)
				}
			}
		}
	}
	t := time.NewTicker(rolloutPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			read()
			return
		case <-t.C:
			read()
		}
	}
}
