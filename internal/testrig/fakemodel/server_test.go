package fakemodel

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call posts body to path on the fake and returns the response.
func call(t *testing.T, s *Server, method, path, body string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel) // the body is read after call returns
	req, err := http.NewRequestWithContext(ctx, method, s.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sseEvent struct {
	Name string
	Data map[string]any
}

// readSSE parses the stream strictly: "event: X" then "data: {json}" then a
// blank line, and the data's type must equal the event name.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		ev := sc.Text()
		require.True(t, strings.HasPrefix(ev, "event: "), "line %q", ev)
		require.True(t, sc.Scan())
		data := sc.Text()
		require.True(t, strings.HasPrefix(data, "data: "), "line %q", data)
		require.True(t, sc.Scan())
		require.Equal(t, "", sc.Text(), "events end with a blank line")
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &m))
		name := strings.TrimPrefix(ev, "event: ")
		require.Equal(t, name, m["type"])
		out = append(out, sseEvent{name, m})
	}
	require.NoError(t, sc.Err())
	return out
}

// assemble rebuilds the message from its events the way a client does.
func assemble(t *testing.T, evs []sseEvent) (msg map[string]any, blocks []map[string]any) {
	t.Helper()
	partial := map[int]string{}
	for _, e := range evs {
		switch e.Name {
		case "message_start":
			msg = e.Data["message"].(map[string]any)
		case "content_block_start":
			blocks = append(blocks, e.Data["content_block"].(map[string]any))
		case "content_block_delta":
			i := int(e.Data["index"].(float64))
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				blocks[i]["text"] = blocks[i]["text"].(string) + d["text"].(string)
			case "thinking_delta":
				blocks[i]["thinking"] = blocks[i]["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				blocks[i]["signature"] = d["signature"]
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			}
		case "message_delta":
			msg["stop_reason"] = e.Data["delta"].(map[string]any)["stop_reason"]
			msg["output_tokens"] = e.Data["usage"].(map[string]any)["output_tokens"]
		}
	}
	for i, p := range partial {
		var in any
		require.NoError(t, json.Unmarshal([]byte(p), &in))
		blocks[i]["input"] = in
	}
	return msg, blocks
}

func TestStreamFraming(t *testing.T) {
	s := New(Sequence(Reply{Content: []Block{
		ThinkingBlock("hmm"), TextBlock("calling"), ToolUseBlock("", "mcp__gate__noop", nil),
		ToolUseBlock("toolu_x", "mcp__gate__add_comment", map[string]string{"body": "hi"}),
	}, Usage: Usage{InputTokens: 7, OutputTokens: 3}})).Start()
	defer s.Close()

	resp := call(t, s, "POST", "/v1/messages?beta=true", `{"model":"claude-test","stream":true,"tools":[{"name":"x"}],"messages":[]}`)
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	evs := readSSE(t, resp.Body)
	names := make([]string, len(evs))
	for i, e := range evs {
		names[i] = e.Name
	}
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)

	msg, blocks := assemble(t, evs)
	assert.Equal(t, "msg_fake_001", msg["id"])
	assert.Equal(t, "claude-test", msg["model"], "model defaults to the requested one")
	assert.Equal(t, "tool_use", msg["stop_reason"])
	assert.EqualValues(t, 3, msg["output_tokens"])
	assert.EqualValues(t, 7, msg["usage"].(map[string]any)["input_tokens"])
	require.Len(t, blocks, 4)
	assert.Equal(t, map[string]any{"type": "thinking", "thinking": "hmm", "signature": "fakemodel-signature"}, blocks[0])
	assert.Equal(t, "calling", blocks[1]["text"])
	assert.Equal(t, "toolu_fake_001_2", blocks[2]["id"], "missing tool ids are generated")
	assert.Equal(t, map[string]any{}, blocks[2]["input"])
	assert.Equal(t, map[string]any{"body": "hi"}, blocks[3]["input"])
}

func TestNonStreamJSON(t *testing.T) {
	s := New(Sequence(Text("hello"))).Start()
	defer s.Close()
	resp := call(t, s, "POST", "/v1/messages", `{"model":"m","tools":[{"name":"x"}],"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, resp.StatusCode)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.Equal(t, "end_turn", m["stop_reason"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "hello"}}, m["content"])
	assert.Equal(t, "hi", s.Requests()[0].UserText())
}

func TestRoutes(t *testing.T) {
	s := New(Sequence()).Start()
	defer s.Close()
	tests := []struct {
		method, path, body string
		status             int
	}{
		{"HEAD", "/", "", 200},
		{"GET", "/v1/models", "", 404},
		{"POST", "/v1/complete", "{}", 404},
		{"GET", "/v1/messages", "", 404},
		{"POST", "/v1/messages/count_tokens", `{"messages":[]}`, 200},
		{"POST", "/v1/messages", `{not json`, 400},
	}
	for _, tt := range tests {
		resp := call(t, s, tt.method, tt.path, tt.body)
		assert.Equal(t, tt.status, resp.StatusCode, "%s %s", tt.method, tt.path)
	}
	reqs := s.Requests()
	require.Len(t, reqs, len(tests), "every request is recorded")
	for i, r := range reqs {
		assert.Equal(t, i+1, r.Seq)
		assert.Equal(t, tests[i].path, r.Path)
	}
	assert.NotEmpty(t, reqs[5].ParseError)
	assert.Len(t, s.Problems(), 1)
}

func TestErrorReplies(t *testing.T) {
	tests := []struct {
		reply      Reply
		status     int
		typ, retry string
	}{
		{Fail(529, "overloaded_error", "Overloaded"), 529, "overloaded_error", "false"},
		{Fail(401, "authentication_error", "invalid x-api-key"), 401, "authentication_error", "false"},
		{Fail(0, "", "no status"), 500, "api_error", "false"},
	}
	for _, tt := range tests {
		s := New(Sequence(tt.reply, Text("after"))).Start()
		resp := call(t, s, "POST", "/v1/messages", `{"stream":true,"tools":[{"name":"x"}]}`)
		assert.Equal(t, tt.status, resp.StatusCode)
		assert.Equal(t, tt.retry, resp.Header.Get("x-should-retry"))
		var body struct {
			Type  string
			Error struct{ Type, Message string }
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		assert.Equal(t, "error", body.Type)
		assert.Equal(t, tt.typ, body.Error.Type)
		assert.Equal(t, tt.reply.Error.Message, body.Error.Message)
		assert.Equal(t, 1, s.Remaining(), "an error reply consumes its slot")
		s.Close()
	}
}

func TestScriptExhausted(t *testing.T) {
	s := New(Sequence(Text("one"))).Start()
	defer s.Close()
	body := `{"tools":[{"name":"x"}],"messages":[]}`
	call(t, s, "POST", "/v1/messages", body)
	assert.Empty(t, s.Problems())
	resp := call(t, s, "POST", "/v1/messages", body)
	assert.Equal(t, 200, resp.StatusCode, "an exhausted script still answers")
	require.Len(t, s.Problems(), 1)
	assert.Contains(t, s.Problems()[0], "script exhausted after 1 replies")
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return string(b)
}

// TestRealRequests parses request bodies captured from Claude Code 2.1.197
// (trimmed) and checks what a Func script sees.
func TestRealRequests(t *testing.T) {
	var seen []Request
	s := New(Func(func(r Request) Reply {
		seen = append(seen, r)
		return Text("ok")
	})).Start()
	defer s.Close()

	call(t, s, "POST", "/v1/messages?beta=true", readFixture(t, "title_request.json"))
	call(t, s, "POST", "/v1/messages?beta=true", readFixture(t, "turn2_tool_error.json"))
	call(t, s, "POST", "/v1/messages?beta=true", readFixture(t, "turn2_tool_ok.json"))

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	title := reqs[0]
	assert.True(t, title.Side && title.Structured)
	assert.Empty(t, title.Tools)
	assert.Equal(t, "beta=true", title.Query)
	require.Len(t, seen, 2, "the side request must not reach the script")

	denied := seen[0]
	assert.False(t, denied.Side)
	assert.True(t, denied.Stream)
	assert.Equal(t, 1, denied.Turn())
	assert.True(t, denied.HasTool("mcp__gate__add_comment"))
	assert.Contains(t, denied.ToolNames(), "Bash")
	assert.Contains(t, denied.System, "Claude Agent SDK")
	assert.Contains(t, denied.UserText(), "Comment on another repo.")
	assert.Equal(t, []string{"user", "system", "assistant", "user"}, roles(denied))
	res, ok := denied.ToolResult("toolu_gate_2")
	require.True(t, ok)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "here-only") // string content

	okReq := seen[1]
	res, ok = okReq.ToolResult("toolu_gate_1")
	require.True(t, ok)
	assert.False(t, res.IsError)
	assert.Equal(t, "comment queued as output #1", res.Content) // array content
	_, ok = okReq.ToolResult("nope")
	assert.False(t, ok)
}

func roles(r Request) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.Role)
	}
	return out
}

func TestDefaultSide(t *testing.T) {
	s := New(Sequence(Text("main"))).Start()
	defer s.Close()
	resp := call(t, s, "POST", "/v1/messages", readFixture(t, "title_request.json"))
	msg, blocks := assemble(t, readSSE(t, resp.Body))
	assert.Equal(t, "end_turn", msg["stop_reason"])
	assert.Equal(t, `{"title":"Fake session"}`, blocks[0]["text"])
	assert.Equal(t, 1, s.Remaining())

	custom := New(Sequence())
	custom.Side = func(Request) Reply { return Fail(500, "api_error", "no titles") }
	custom.Start()
	defer custom.Close()
	resp = call(t, custom, "POST", "/v1/messages", readFixture(t, "title_request.json"))
	assert.Equal(t, 500, resp.StatusCode)
}

func TestToolUseBlockInput(t *testing.T) {
	tests := []struct {
		name  string
		input any
		want  string
	}{
		{"nil", nil, `{}`},
		{"map", map[string]int{"n": 1}, `{"n":1}`},
		{"raw", json.RawMessage(`{"a":true}`), `{"a":true}`},
		{"bytes", []byte(`[1]`), `[1]`},
		{"json string", `{"s":"x"}`, `{"s":"x"}`},
		{"plain string", `hello`, `"hello"`},
		{"unmarshalable", map[string]any{"f": func() {}}, `{"fakemodel_error":"json: unsupported type: func()"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.JSONEq(t, tt.want, string(ToolUseBlock("id", "n", tt.input).Input))
		})
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, name := range []string{"title_request.json", "turn2_tool_error.json", "turn2_tool_ok.json"} {
		b, err := os.ReadFile("testdata/" + name)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","content":7}]}],"system":3}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := Request{Body: body}
		_ = r.parseBody()
		_ = r.ToolResults()
		_ = r.UserText()
		_ = r.IsSide()
		_ = r.Turn()
	})
}
