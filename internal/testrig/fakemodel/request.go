package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is one HTTP request the server received, with the Messages API
// body parsed when there is one.
type Request struct {
	Seq    int // 1-based arrival order among all requests
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte

	Model     string
	Stream    bool
	MaxTokens int
	System    string // text of all system blocks, joined by newlines
	Messages  []Message
	Tools     []Tool
	// Structured is true when the request asks for structured output
	// (output_config.format); Claude Code 2.1.197 does so for session titles.
	Structured bool
	// Side is true when the server classified the call as a side request
	// (see IsSide) and answered it without consuming the script.
	Side bool
	// ParseError is set when the body of a messages call was not valid JSON.
	ParseError string
}

// Message is one message of the conversation sent to the model. Roles seen
// from Claude Code 2.1.197: user, assistant and system (mid-conversation
// system messages).
type Message struct {
	Role   string
	Blocks []Block
}

// Tool is one tool offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Freeform marks a tool that takes raw text instead of JSON (the
	// Responses API's custom tools, e.g. Codex's apply_patch); a script
	// calls it with the input {"input": "<text>"}.
	Freeform bool `json:"freeform,omitempty"`
}

// ToolNames lists the names of the tools offered, in order.
func (r Request) ToolNames() []string {
	names := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// HasTool says whether a tool of that name was offered.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// ToolResults lists every tool_result block in the conversation, in order.
func (r Request) ToolResults() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// ToolResult finds the result of one tool call.
func (r Request) ToolResult(toolUseID string) (Block, bool) {
	for _, b := range r.ToolResults() {
		if b.ToolUseID == toolUseID {
			return b, true
		}
	}
	return Block{}, false
}

// Turn counts the assistant messages already in the conversation, so a
// Func script can tell which step of a dialogue it is answering.
func (r Request) Turn() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// UserText is the text of all user text blocks, joined by newlines.
func (r Request) UserText() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// IsSide says whether a messages call is a side request (Claude Code's
// session title, asked with structured output) rather than a turn of the
// agent loop; a call without tools can still be a turn.
func (r Request) IsSide() bool {
	return r.Structured
}

type wireRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	MaxTokens    int             `json:"max_tokens"`
	System       json.RawMessage `json:"system"`
	Messages     []wireMessage   `json:"messages"`
	Tools        []Tool          `json:"tools"`
	OutputConfig struct {
		Format json.RawMessage `json:"format"`
	} `json:"output_config"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// parseBody fills the Messages API fields of r from its body.
func (r *Request) parseBody() error {
	var w wireRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return err
	}
	r.Model, r.Stream, r.MaxTokens, r.Tools = w.Model, w.Stream, w.MaxTokens, w.Tools
	r.Structured = len(w.OutputConfig.Format) > 0 && string(w.OutputConfig.Format) != "null"
	r.System = strings.Join(textParts(w.System), "\n")
	for _, m := range w.Messages {
		r.Messages = append(r.Messages, Message{Role: m.Role, Blocks: parseBlocks(m.Content)})
	}
	return nil
}

// parseBlocks reads message content, which is a string or a block array.
func parseBlocks(raw json.RawMessage) []Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var wbs []wireBlock
	if json.Unmarshal(raw, &wbs) != nil {
		return nil
	}
	out := make([]Block, 0, len(wbs))
	for _, wb := range wbs {
		b := Block{Type: wb.Type, Text: wb.Text, Thinking: wb.Thinking, Signature: wb.Signature,
			ID: wb.ID, Name: wb.Name, Input: wb.Input, ToolUseID: wb.ToolUseID, IsError: wb.IsError}
		if wb.Type == "tool_result" {
			b.Content = strings.Join(textParts(wb.Content), "\n")
		}
		out = append(out, b)
	}
	return out
}

// textParts reads a string or an array of {type:"text",text} parts.
func textParts(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var parts []wireBlock
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return out
}
