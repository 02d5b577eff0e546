package openai

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// response is a Reply as a Responses API response object: one output item
// per block (message with output_text, function_call, reasoning). kinds
// names the wire type of the tools the request offered that are not
// functions: a call of a custom tool is a custom_tool_call, of the hosted
// tool_search a tool_search_call.
func response(n int, model string, r fakemodel.Reply, kinds map[string]string) map[string]any {
	var items []any
	for i, b := range r.Content {
		items = append(items, outputItem(n, i, b, kinds[b.Name]))
	}
	if items == nil {
		items = []any{}
	}
	u := r.Usage
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u = fakemodel.Usage{InputTokens: 100, OutputTokens: 10}
	}
	return map[string]any{
		"id": fmt.Sprintf("resp_fake_%03d", n), "object": "response", "status": "completed",
		"model": model, "output": items,
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"total_tokens":          u.InputTokens + u.OutputTokens,
			"input_tokens_details":  map[string]int{"cached_tokens": 0},
			"output_tokens_details": map[string]int{"reasoning_tokens": 0},
		},
	}
}

func outputItem(n, i int, b fakemodel.Block, kind string) map[string]any {
	switch b.Type {
	case "tool_use":
		id := b.ID
		if id == "" {
			id = toolCallID(n, i)
		}
		switch kind {
		case toolSearch:
			// executed by the client (Codex searches its deferred tools);
			// the arguments are an object, not a JSON string
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			return map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("tsc_fake_%03d_%d", n, i),
				"call_id": id, "execution": "client", "status": "completed", "arguments": args}
		case "custom":
			// a custom tool takes its input as raw text
			var in struct {
				Input string `json:"input"`
			}
			_ = json.Unmarshal(b.Input, &in)
			return map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%03d_%d", n, i),
				"call_id": id, "name": b.Name, "input": in.Input, "status": "completed"}
		}
		args := string(b.Input)
		if args == "" {
			args = "{}"
		}
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%03d_%d", n, i),
			"call_id": id, "name": b.Name, "arguments": args, "status": "completed"}
		// Codex offers MCP tools in namespaces (mcp__<server>): a call
		// names the namespace and the tool separately.
		if ns, name, ok := splitNamespace(b.Name); ok {
			item["namespace"], item["name"] = ns, name
		}
		return item
	case "thinking":
		return map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_fake_%03d_%d", n, i),
			"summary": []any{map[string]any{"type": "summary_text", "text": b.Thinking}}}
	default:
		return map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake_%03d_%d", n, i),
			"role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}}}
	}
}

// splitNamespace splits "mcp__gate__add_comment" into the namespace
// "mcp__gate" and the tool "add_comment".
func splitNamespace(name string) (ns, tool string, ok bool) {
	if !strings.HasPrefix(name, "mcp__") {
		return "", name, false
	}
	i := strings.LastIndex(name, "__")
	if i < len("mcp__")+1 || i+2 >= len(name) {
		return "", name, false
	}
	return name[:i], name[i+2:], true
}

// joinNamespace is the flat name of a tool in a namespace: the default
// namespace "functions" adds nothing, others join with "__".
func joinNamespace(ns, name string) string {
	ns = strings.TrimRight(ns, "_")
	if ns == "" || ns == "functions" {
		return name
	}
	return ns + "__" + name
}

// writeSSE streams resp the way the Responses API does: response.created,
// per item output_item.added / text deltas / output_item.done, then
// response.completed with the usage.
func writeSSE(w http.ResponseWriter, resp map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	seq := 0
	emit := func(typ string, data map[string]any) {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if fl != nil {
			fl.Flush()
		}
	}
	head := map[string]any{}
	for k, v := range resp {
		head[k] = v
	}
	head["status"], head["output"] = "in_progress", []any{}
	delete(head, "usage")
	emit("response.created", map[string]any{"response": head})
	emit("response.in_progress", map[string]any{"response": head})
	for i, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		emit("response.output_item.added", map[string]any{"output_index": i, "item": item})
		if item["type"] == "message" {
			text := item["content"].([]any)[0].(map[string]any)["text"]
			emit("response.output_text.delta", map[string]any{"output_index": i, "item_id": item["id"],
				"content_index": 0, "delta": text})
			emit("response.output_text.done", map[string]any{"output_index": i, "item_id": item["id"],
				"content_index": 0, "text": text})
		}
		emit("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	emit("response.completed", map[string]any{"response": resp})
}

// wireRequest is the part of a Responses API request the fake reads.
type wireRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	MaxTokens    int             `json:"max_output_tokens"`
	Tools        []wireTool      `json:"tools"`
	Input        json.RawMessage `json:"input"`
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Tools       []wireTool      `json:"tools"` // namespace
}

type wireItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"` // a JSON string; an object in tool_search_call
	Input     string          `json:"input"`     // custom_tool_call
	Output    json.RawMessage `json:"output"`
	Tools     []wireTool      `json:"tools"` // additional_tools, tool_search_output
}

// toolSearch is the Responses API's hosted tool-search tool (its wire type
// and the name a script calls it by): Codex offers its deferred tools,
// MCP tools among them, only through it to catalog models like gpt-5.5,
// and executes the search itself ("execution":"client").
const toolSearch = "tool_search"

// toolKinds maps the tools body offers at the top level that are not
// plain functions (custom, tool_search, web_search…) to their wire type.
func toolKinds(body []byte) map[string]string {
	var w struct {
		Tools []wireTool `json:"tools"`
	}
	_ = json.Unmarshal(body, &w) // a bad body is parseRequest's to report
	kinds := map[string]string{}
	for _, t := range w.Tools {
		if t.Type != "function" && t.Type != "namespace" {
			kinds[cmp.Or(t.Name, t.Type)] = t.Type
		}
	}
	return kinds
}

// parseRequest fills req's provider-neutral fields from its body: the
// tools offered (namespaces flattened to "<namespace>__<name>"), and the
// input items as messages. Consecutive assistant items (text and calls of
// one response) form one assistant message, so Request.Turn counts
// responses; developer and system messages go to System.
func parseRequest(req *fakemodel.Request) error {
	var w wireRequest
	if err := json.Unmarshal(req.Body, &w); err != nil {
		return err
	}
	req.Model, req.Stream, req.MaxTokens = w.Model, w.Stream, w.MaxTokens
	req.Tools = append(req.Tools, flattenTools("", w.Tools)...)
	var system []string
	if w.Instructions != "" {
		system = append(system, w.Instructions)
	}
	var items []wireItem
	var s string
	if json.Unmarshal(w.Input, &s) == nil {
		items = []wireItem{{Type: "message", Role: "user", Content: w.Input}}
	} else if len(w.Input) > 0 {
		if err := json.Unmarshal(w.Input, &items); err != nil {
			return fmt.Errorf("input: %w", err)
		}
	}
	add := func(role string, b fakemodel.Block) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == role {
			req.Messages[n-1].Blocks = append(req.Messages[n-1].Blocks, b)
			return
		}
		req.Messages = append(req.Messages, fakemodel.Message{Role: role, Blocks: []fakemodel.Block{b}})
	}
	for _, it := range items {
		switch it.Type {
		case "additional_tools":
			req.Tools = append(req.Tools, flattenTools("", it.Tools)...)
		case "message", "":
			text := strings.Join(textParts(it.Content), "\n")
			switch it.Role {
			case "developer", "system":
				system = append(system, text)
			case "assistant":
				add("assistant", fakemodel.TextBlock(text))
			default:
				add("user", fakemodel.TextBlock(text))
			}
		case "function_call":
			add("assistant", fakemodel.Block{Type: "tool_use", ID: it.CallID, Name: joinNamespace(it.Namespace, it.Name),
				Input: rawArgs(it.Arguments)})
		case "tool_search_call":
			add("assistant", fakemodel.Block{Type: "tool_use", ID: it.CallID, Name: toolSearch, Input: rawArgs(it.Arguments)})
		case "tool_search_output":
			// the tools found are offered from here on; the result reads
			// as their names
			found := flattenTools("", it.Tools)
			names := make([]string, 0, len(found))
			for _, t := range found {
				names = append(names, t.Name)
				if !req.HasTool(t.Name) {
					req.Tools = append(req.Tools, t)
				}
			}
			add("user", fakemodel.Block{Type: "tool_result", ToolUseID: it.CallID, Content: strings.Join(names, "\n")})
		case "custom_tool_call":
			in, _ := json.Marshal(map[string]string{"input": it.Input})
			add("assistant", fakemodel.Block{Type: "tool_use", ID: it.CallID, Name: joinNamespace(it.Namespace, it.Name), Input: in})
		case "function_call_output", "custom_tool_call_output":
			add("user", fakemodel.Block{Type: "tool_result", ToolUseID: it.CallID,
				Content: strings.Join(textParts(it.Output), "\n")})
		case "reasoning":
			// carried back by the client; nothing a script needs
		default:
			add("user", fakemodel.Block{Type: it.Type})
		}
	}
	req.System = strings.Join(system, "\n")
	return nil
}

func flattenTools(ns string, tools []wireTool) []fakemodel.Tool {
	var out []fakemodel.Tool
	for _, t := range tools {
		if t.Type == "namespace" {
			out = append(out, flattenTools(joinNamespace(ns, t.Name), t.Tools)...)
			continue
		}
		name := t.Name
		if name == "" {
			name = t.Type // web_search, image_generation…
		}
		out = append(out, fakemodel.Tool{Name: joinNamespace(ns, name), Description: t.Description, InputSchema: t.Parameters,
			Freeform: t.Type == "custom"})
	}
	return out
}

// rawArgs is a call's arguments as JSON: a JSON string holding JSON is
// unwrapped, any other string kept as a JSON string, an object as is.
func rawArgs(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		if len(raw) == 0 || !json.Valid(raw) {
			return json.RawMessage(`{}`)
		}
		return raw
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// textParts reads a string, or the text of an array of content parts
// (input_text, output_text, text).
func textParts(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return []string{string(raw)}
	}
	var out []string
	for _, p := range parts {
		if p.Text != "" || strings.HasSuffix(p.Type, "text") {
			out = append(out, p.Text)
		}
	}
	return out
}
