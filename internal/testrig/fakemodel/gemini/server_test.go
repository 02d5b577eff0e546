package gemini

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// A second turn as Gemini CLI 0.61.0 sends it (trimmed).
const turn2 = `{"contents":[{"role":"user","parts":[{"text":"say hi"}]},
{"role":"model","parts":[{"text":"calling"},{"functionCall":{"id":"c1","name":"mcp_gate_add_comment","args":{"body":"x"}}}]},
{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"mcp_gate_add_comment","response":{"error":"denied by policy"}}}]}],
"systemInstruction":{"parts":[{"text":"be brief"}]},
"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"mcp_gate_add_comment","parametersJsonSchema":{"type":"object"}}]}],
"generationConfig":{"temperature":1}}`

func TestParseRequest(t *testing.T) {
	req := fakemodel.Request{Body: []byte(turn2)}
	require.NoError(t, parseRequest(&req))
	assert.False(t, req.Side)
	assert.Equal(t, []string{"read_file", "mcp_gate_add_comment"}, req.ToolNames())
	assert.Equal(t, "be brief", req.System)
	assert.Equal(t, 1, req.Turn())
	res, ok := req.ToolResult("c1")
	require.True(t, ok)
	assert.True(t, res.IsError)
	assert.Equal(t, "denied by policy", res.Content)
}

func TestServe(t *testing.T) {
	s := New(fakemodel.Sequence(fakemodel.ToolCall("", "mcp_gate_noop", map[string]string{"reason": "r"}))).Start()
	defer s.Close()
	post := func(path, body string) (int, string) {
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	// a JSON side request (the CLI's next-speaker check) does not use the script
	code, body := post("/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"next_speaker?"}]}],"generationConfig":{"responseMimeType":"application/json"}}`)
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "next_speaker")
	code, body = post("/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	assert.Equal(t, 200, code)
	data, ok := strings.CutPrefix(strings.TrimSpace(body), "data: ")
	require.True(t, ok, body)
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall struct {
						Name string
						Args json.RawMessage
					}
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(data), &resp))
	assert.Equal(t, "mcp_gate_noop", resp.Candidates[0].Content.Parts[0].FunctionCall.Name)
	assert.Len(t, s.AgentRequests(), 1)
	assert.Zero(t, s.Remaining())
	code, _ = post("/v1beta/models/m:other", `{}`)
	assert.Equal(t, 404, code)
	assert.Empty(t, s.Problems())
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(turn2))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := fakemodel.Request{Body: body}
		if parseRequest(&req) == nil {
			_ = req.Turn()
			_ = req.ToolResults()
		}
	})
}
