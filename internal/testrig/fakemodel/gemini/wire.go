package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// response is a Reply as a GenerateContentResponse: text parts, thought
// parts and functionCall parts in one model candidate.
func response(n int, model string, r fakemodel.Reply) map[string]any {
	parts := []any{}
	for i, b := range r.Content {
		switch b.Type {
		case "tool_use":
			args := b.Input
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			id := b.ID
			if id == "" {
				id = fmt.Sprintf("call_fake_%03d_%d", n, i)
			}
			parts = append(parts, map[string]any{"functionCall": map[string]any{"id": id, "name": b.Name, "args": args}})
		case "thinking":
			parts = append(parts, map[string]any{"text": b.Thinking, "thought": true})
		default:
			parts = append(parts, map[string]any{"text": b.Text})
		}
	}
	u := r.Usage
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u = fakemodel.Usage{InputTokens: 100, OutputTokens: 10}
	}
	finish := "STOP"
	if r.StopReason == fakemodel.StopMaxTokens {
		finish = "MAX_TOKENS"
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": finish, "index": 0,
		}},
		"usageMetadata": map[string]int{"promptTokenCount": u.InputTokens, "candidatesTokenCount": u.OutputTokens,
			"totalTokenCount": u.InputTokens + u.OutputTokens},
		"modelVersion": model,
		"responseId":   fmt.Sprintf("resp_fake_%03d", n),
	}
}

type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			JSONSchema  json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		MaxOutputTokens  int    `json:"maxOutputTokens"`
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// parseRequest fills req's provider-neutral fields: model turns become
// assistant messages, functionResponse parts tool_result blocks (IsError
// when the response holds an "error" key).
func parseRequest(req *fakemodel.Request) error {
	var w wireRequest
	if err := json.Unmarshal(req.Body, &w); err != nil {
		return err
	}
	req.MaxTokens = w.GenerationConfig.MaxOutputTokens
	req.Structured = strings.Contains(w.GenerationConfig.ResponseMimeType, "json")
	req.Side = req.Structured
	if w.SystemInstruction != nil {
		var texts []string
		for _, p := range w.SystemInstruction.Parts {
			texts = append(texts, p.Text)
		}
		req.System = strings.Join(texts, "\n")
	}
	for _, t := range w.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.JSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			req.Tools = append(req.Tools, fakemodel.Tool{Name: f.Name, Description: f.Description, InputSchema: schema})
		}
	}
	for _, c := range w.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		var blocks []fakemodel.Block
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				blocks = append(blocks, fakemodel.Block{Type: "tool_use", ID: p.FunctionCall.ID,
					Name: p.FunctionCall.Name, Input: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				blocks = append(blocks, toolResult(p.FunctionResponse.ID, p.FunctionResponse.Name, p.FunctionResponse.Response))
			case p.Thought:
				blocks = append(blocks, fakemodel.Block{Type: "thinking", Thinking: p.Text})
			default:
				blocks = append(blocks, fakemodel.TextBlock(p.Text))
			}
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == role {
			req.Messages[n-1].Blocks = append(req.Messages[n-1].Blocks, blocks...)
			continue
		}
		req.Messages = append(req.Messages, fakemodel.Message{Role: role, Blocks: blocks})
	}
	return nil
}

// toolResult reads a functionResponse: {"output": …} or {"error": …}.
func toolResult(id, name string, raw json.RawMessage) fakemodel.Block {
	if id == "" {
		id = name
	}
	b := fakemodel.Block{Type: "tool_result", ToolUseID: id, Name: name}
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil {
		b.Content = string(raw)
		return b
	}
	text := func(v json.RawMessage) string {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	}
	switch {
	case r["error"] != nil:
		b.IsError, b.Content = true, text(r["error"])
	case r["output"] != nil:
		b.Content = text(r["output"])
	default:
		b.Content = string(raw)
	}
	return b
}
