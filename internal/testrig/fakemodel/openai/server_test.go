package openai

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
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
	item := onlyOutput(t, s, `{"model":"m","stream":false,"input":"hi","tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"f"}]}`)
	assert.Equal(t, "custom_tool_call", item["type"])
	assert.Equal(t, "apply_patch", item["name"])
	assert.Equal(t, "*** Begin Patch\n*** End Patch", item["input"])
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
	f.Add([]byte(turnSearch))
	f.Add([]byte(`{"input":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := fakemodel.Request{Body: body}
		if parseRequest(&req) == nil {
			_ = req.Turn()
			_ = req.ToolResults()
		}
	})
}

// turnSearch is a third request as Codex 0.169.0 sends it to gpt-5.5
// (trimmed): its MCP tools are deferred behind the hosted tool_search,
// the model searched, Codex answered with the tools found (offered from
// then on), and the model called one of them.
const turnSearch = `{"model":"gpt-5.5","stream":true,
"tools":[{"type":"function","name":"list_mcp_resources","parameters":{}},{"type":"custom","name":"apply_patch"},
{"type":"tool_search","execution":"client","description":"# Tool discovery","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"number"}},"required":["query"]}}],
"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"say hi"}]},
{"type":"tool_search_call","id":"tsc_1","call_id":"c1","status":"completed","execution":"client","arguments":{"limit":20,"query":"gate"}},
{"type":"tool_search_output","id":"tso_1","call_id":"c1","status":"completed","execution":"client","tools":[{"type":"namespace","name":"mcp__gate","description":"writes","tools":[{"type":"function","name":"add_comment","defer_loading":true,"parameters":{}},{"type":"function","name":"noop","defer_loading":true,"parameters":{}}]}]},
{"type":"function_call","id":"fc_2","name":"noop","namespace":"mcp__gate","arguments":"{\"reason\":\"r\"}","call_id":"c2"},
{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"recorded"}]},
{"type":"tool_search_call","id":"tsc_3","call_id":"c3","status":"completed","execution":"client","arguments":{"query":"noop"}},
{"type":"tool_search_output","id":"tso_3","call_id":"c3","status":"completed","execution":"client","tools":[{"type":"namespace","name":"mcp__gate","tools":[{"type":"function","name":"noop","parameters":{}}]}]}]}`

// TestParseToolSearch: a tool search is a call of "tool_search" with its
// arguments, and its output a result naming the tools found, which are
// offered from then on (once, however often they are found).
func TestParseToolSearch(t *testing.T) {
	req := fakemodel.Request{Body: []byte(turnSearch)}
	require.NoError(t, parseRequest(&req))
	assert.Equal(t, []string{"list_mcp_resources", "apply_patch", "tool_search", "mcp__gate__add_comment", "mcp__gate__noop"}, req.ToolNames())
	assert.Equal(t, 3, req.Turn())
	call := req.Messages[1].Blocks[0]
	assert.Equal(t, "tool_search", call.Name)
	assert.Equal(t, "c1", call.ID)
	assert.JSONEq(t, `{"limit":20,"query":"gate"}`, string(call.Input))
	for _, tc := range []struct{ id, want string }{
		{"c1", "mcp__gate__add_comment\nmcp__gate__noop"},
		{"c2", "recorded"},
		{"c3", "mcp__gate__noop"},
	} {
		res, ok := req.ToolResult(tc.id)
		require.True(t, ok, tc.id)
		assert.Equal(t, tc.want, res.Content, tc.id)
	}
}

// TestServeToolSearchCall: a script's call of "tool_search" goes out as
// the hosted tool's tool_search_call (arguments an object, executed by
// the client) when the request offered that tool, and as a plain
// function call of that name when it did not.
func TestServeToolSearchCall(t *testing.T) {
	for _, tc := range []struct {
		name, tools string
		want        map[string]any
	}{
		{"offered", `[{"type":"tool_search","execution":"client"},{"type":"function","name":"f"}]`, map[string]any{
			"type": "tool_search_call", "call_id": "call_s", "execution": "client", "status": "completed",
			"arguments": map[string]any{"query": "gate tools", "limit": float64(20)}}},
		{"not offered", `[{"type":"function","name":"tool_search"}]`, map[string]any{
			"type": "function_call", "call_id": "call_s", "name": "tool_search", "status": "completed",
			"arguments": `{"limit":20,"query":"gate tools"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(fakemodel.Sequence(fakemodel.ToolCall("call_s", "tool_search", map[string]any{"query": "gate tools", "limit": 20}))).Start()
			defer s.Close()
			item := onlyOutput(t, s, `{"model":"gpt-5.5","stream":false,"input":"hi","tools":`+tc.tools+`}`)
			assert.NotEmpty(t, item["id"])
			delete(item, "id")
			assert.Equal(t, tc.want, item)
			assert.Empty(t, s.Problems())
		})
	}
}

// onlyOutput posts a non-streaming request to s and returns the one
// output item of its answer.
func onlyOutput(t *testing.T, s *Server, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct{ Output []map[string]any }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Output, 1)
	return out.Output[0]
}
