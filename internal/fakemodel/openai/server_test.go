package openai

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/fakemodel"
)

// A second turn as Codex 0.169.0 sends it (trimmed): MCP tools in a
// namespace, the model's call and the tool's output as input items.
const turn2 = `{"model":"gpt-fake","stream":true,"instructions":"be brief",
"tools":[{"type":"function","name":"exec_command","parameters":{}},{"type":"namespace","name":"mcp__gate","tools":[{"type":"function","name":"add_comment"}]},{"type":"web_search"}],
"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
{"type":"message","role":"user","content":[{"type":"input_text","text":"say hi"}]},
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"calling"}]},
{"type":"function_call","name":"add_comment","namespace":"mcp__gate","arguments":"{\"body\":\"x\"}","call_id":"c1"},
{"type":"function_call_output","call_id":"c1","output":"denied by policy"}]}`

func TestParseRequest(t *testing.T) {
	req := fakemodel.Request{Body: []byte(turn2)}
	require.NoError(t, parseRequest(&req))
	assert.Equal(t, "gpt-fake", req.Model)
	assert.True(t, req.Stream)
	assert.Equal(t, []string{"exec_command", "mcp__gate__add_comment", "web_search"}, req.ToolNames())
	assert.Equal(t, "be brief\nrules", req.System)
	assert.Equal(t, 1, req.Turn())
	assert.Equal(t, "say hi", req.UserText())
	res, ok := req.ToolResult("c1")
	require.True(t, ok)
	assert.Equal(t, "denied by policy", res.Content)
	assert.Equal(t, "mcp__gate__add_comment", req.Messages[1].Blocks[1].Name)
}

func TestServeSSE(t *testing.T) {
	s := New(fakemodel.Sequence(fakemodel.Reply{Content: []fakemodel.Block{
		fakemodel.TextBlock("calling"), fakemodel.ToolUseBlock("", "mcp__gate__noop", map[string]string{"reason": "r"})}})).Start()
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","stream":true,"input":"hi"}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var types []string
	var call map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		types = append(types, ev["type"].(string))
		if it, ok := ev["item"].(map[string]any); ok && ev["type"] == "response.output_item.done" && it["type"] == "function_call" {
			call = it
		}
	}
	assert.Equal(t, "response.created", types[0])
	assert.Equal(t, "response.completed", types[len(types)-1])
	assert.Contains(t, types, "response.output_text.delta")
	require.NotNil(t, call)
	assert.Equal(t, "mcp__gate", call["namespace"])
	assert.Equal(t, "noop", call["name"])
	assert.JSONEq(t, `{"reason":"r"}`, call["arguments"].(string))
	assert.Empty(t, s.Problems())
}

// TestServeCustomToolCall: a call of a tool the request offered as a
// custom (freeform) tool, like Codex's apply_patch, goes out as a
// custom_tool_call carrying the raw input text.
func TestServeCustomToolCall(t *testing.T) {
	s := New(fakemodel.Sequence(fakemodel.ToolCall("", "apply_patch", map[string]string{"input": "*** Begin Patch\n*** End Patch"}))).Start()
	defer s.Close()
	body := `{"model":"m","stream":false,"input":"hi","tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"f"}]}`
	resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct{ Output []map[string]any }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Output, 1)
	assert.Equal(t, "custom_tool_call", out.Output[0]["type"])
	assert.Equal(t, "apply_patch", out.Output[0]["name"])
	assert.Equal(t, "*** Begin Patch\n*** End Patch", out.Output[0]["input"])
	req := s.AgentRequests()[0]
	require.Len(t, req.Tools, 2)
	assert.True(t, req.Tools[0].Freeform)
	assert.False(t, req.Tools[1].Freeform)
}

func TestServeError(t *testing.T) {
	s := New(fakemodel.Sequence(fakemodel.Fail(401, "invalid_api_key", "bad key"))).Start()
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","input":[]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)
	var body struct {
		Error struct{ Message, Type string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "bad key", body.Error.Message)
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(turn2))
	f.Add([]byte(`{"input":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := fakemodel.Request{Body: body}
		if parseRequest(&req) == nil {
			_ = req.Turn()
			_ = req.ToolResults()
		}
	})
}
