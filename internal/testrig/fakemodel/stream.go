package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// message is a Reply as the Messages API returns it (stream false), and the
// skeleton of message_start (stream true).
type message struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []any          `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        map[string]int `json:"usage"`
}

func wireContent(b Block) any {
	switch b.Type {
	case "tool_use":
		in := b.Input
		if len(in) == 0 {
			in = json.RawMessage(`{}`)
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": in}
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature}
	default:
		return map[string]any{"type": "text", "text": b.Text}
	}
}

func usageMap(u Usage, output int) map[string]int {
	return map[string]int{
		"input_tokens": u.InputTokens, "output_tokens": output,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
}

// writeJSON answers a stream:false call with the whole message.
func writeJSON(w http.ResponseWriter, id, model string, r Reply) {
	stop := r.stopReason()
	m := message{ID: id, Type: "message", Role: "assistant", Model: model,
		StopReason: &stop, Usage: usageMap(r.usage(), r.usage().OutputTokens)}
	for _, b := range r.Content {
		m.Content = append(m.Content, wireContent(b))
	}
	if m.Content == nil {
		m.Content = []any{}
	}
	WriteJSON(w, m)
}

// writeSSE answers a stream:true call with the event sequence the real API
// sends: message_start, ping, per block content_block_start / _delta… /
// _stop, message_delta (stop_reason, output usage), message_stop. Each
// event is "event: <type>\ndata: <json>\n\n", flushed at once.
func writeSSE(w http.ResponseWriter, id, model string, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	emit := func(typ string, data any) {
		b, _ := json.Marshal(data)
		writeEvent(w, typ, b)
		if fl != nil {
			fl.Flush()
		}
	}
	u := r.usage()
	emit("message_start", map[string]any{"type": "message_start", "message": message{
		ID: id, Type: "message", Role: "assistant", Model: model, Content: []any{},
		Usage: usageMap(u, 1)}})
	emit("ping", map[string]any{"type": "ping"})
	for i, b := range r.Content {
		for _, ev := range blockEvents(i, b) {
			emit(ev["type"].(string), ev)
		}
	}
	emit("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": u.OutputTokens}})
	emit("message_stop", map[string]any{"type": "message_stop"})
}

func writeEvent(w io.Writer, typ string, data []byte) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
}

// blockEvents streams one block: start with an empty block, then deltas.
func blockEvents(i int, b Block) []map[string]any {
	start := func(cb any) map[string]any {
		return map[string]any{"type": "content_block_start", "index": i, "content_block": cb}
	}
	delta := func(d any) map[string]any {
		return map[string]any{"type": "content_block_delta", "index": i, "delta": d}
	}
	stop := map[string]any{"type": "content_block_stop", "index": i}
	switch b.Type {
	case "tool_use":
		in := string(b.Input)
		if in == "" {
			in = "{}"
		}
		return []map[string]any{
			start(map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}),
			delta(map[string]any{"type": "input_json_delta", "partial_json": in}),
			stop,
		}
	case "thinking":
		return []map[string]any{
			start(map[string]any{"type": "thinking", "thinking": "", "signature": ""}),
			delta(map[string]any{"type": "thinking_delta", "thinking": b.Thinking}),
			delta(map[string]any{"type": "signature_delta", "signature": b.Signature}),
			stop,
		}
	default:
		return []map[string]any{
			start(map[string]any{"type": "text", "text": ""}),
			delta(map[string]any{"type": "text_delta", "text": b.Text}),
			stop,
		}
	}
}

// writeError answers with the Messages API error shape. x-should-retry:
// false stops the SDK's own retries; Claude Code still applies its own
// policy (CLAUDE_CODE_MAX_RETRIES).
func writeError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("x-should-retry", "false")
	WriteError(w, e, "api_error", func(_ int, typ string) any {
		return map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": e.Message}}
	})
}
