package fakemodel

import (
	"encoding/json"
	"fmt"
)

// Stop reasons a Reply may end with.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// Block is one content block, in a Reply (text, thinking, tool_use) or in a
// Request's messages (also tool_result).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`      // text
	Thinking  string          `json:"thinking,omitempty"`  // thinking
	Signature string          `json:"signature,omitempty"` // thinking
	ID        string          `json:"id,omitempty"`        // tool_use
	Name      string          `json:"name,omitempty"`      // tool_use
	Input     json.RawMessage `json:"input,omitempty"`     // tool_use arguments
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"` // tool_result
	// Content is a tool_result's content flattened to text (string content
	// as is; text parts of an array joined by newlines).
	Content string `json:"content,omitempty"`
}

// Usage is the token usage a Reply reports.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// APIError makes the server answer a call with an HTTP error in the
// Messages API's error shape instead of a message.
type APIError struct {
	Status  int    // e.g. 500, 529, 401, 429
	Type    string // e.g. "api_error", "overloaded_error", "authentication_error"
	Message string
}

// ModelOr is the reply's model, or the one the request asked for.
func (r Reply) ModelOr(requested string) string {
	if r.Model == "" {
		return requested
	}
	return r.Model
}

func (e *APIError) Error() string {
	return fmt.Sprintf("fakemodel: HTTP %d %s: %s", e.Status, e.Type, e.Message)
}

// Reply is one assistant message.
type Reply struct {
	Content []Block
	// StopReason defaults to tool_use when Content has a tool_use block,
	// end_turn otherwise.
	StopReason string
	// Usage defaults to a small non-zero usage so cost accounting has data.
	Usage Usage
	// Model defaults to the model the request asked for.
	Model string
	// Error, when set, answers the call with this HTTP error instead.
	Error *APIError
}

// TextBlock is a text content block.
func TextBlock(text string) Block { return Block{Type: "text", Text: text} }

// ThinkingBlock is a thinking content block with a fake signature.
func ThinkingBlock(thinking string) Block {
	return Block{Type: "thinking", Thinking: thinking, Signature: "fakemodel-signature"}
}

// ToolUseBlock is a tool_use block. input is marshalled to JSON unless it
// already is JSON ([]byte, json.RawMessage or string holding JSON); an empty
// id gets a generated one when served.
func ToolUseBlock(id, name string, input any) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: toJSON(input)}
}

// Text is a reply of one text block that ends the turn.
func Text(text string) Reply { return Reply{Content: []Block{TextBlock(text)}} }

// ToolCall is a reply of one tool_use block.
func ToolCall(id, name string, input any) Reply {
	return Reply{Content: []Block{ToolUseBlock(id, name, input)}}
}

// Fail is a reply that answers the call with an HTTP error.
func Fail(status int, typ, message string) Reply {
	return Reply{Error: &APIError{Status: status, Type: typ, Message: message}}
}

func toJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage(`{}`)
	case json.RawMessage:
		if json.Valid(x) {
			return x
		}
	case []byte:
		if json.Valid(x) {
			return json.RawMessage(x)
		}
	case string:
		if json.Valid([]byte(x)) {
			return json.RawMessage(x)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		// A test helper must not panic; make the problem visible to the model.
		b, _ = json.Marshal(map[string]string{"fakemodel_error": err.Error()})
	}
	return b
}

// stopReason is the reply's stop reason with its default applied.
func (r Reply) stopReason() string {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			return StopToolUse
		}
	}
	return StopEndTurn
}

func (r Reply) usage() Usage {
	u := r.Usage
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u = Usage{InputTokens: 100, OutputTokens: 10}
	}
	return u
}
