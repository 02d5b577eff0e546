package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/enginetest"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// The real Gemini CLI runs through this engine in internal/runner/agent's
// TestEngine* tests (through the runner's own gate: a completed run, the
// gate call queued, its events and transcript); a run here would only
// repeat one of them at ~3 s of CPU per CLI start.

func testMapper() enginetest.Mapper {
	m := newMapper("gemini-fake")
	return enginetest.Mapper{Map: m.Map, Flush: m.Flush}
}

// TestMapRealCapture: an allowed gate call, as Gemini CLI 0.61.0 printed it.
func TestMapRealCapture(t *testing.T) {
	evs := enginetest.DecodeFile(t, "testdata/allowed_comment.jsonl", testMapper())
	require.Equal(t, []session.EventKind{session.EventInit, session.EventUserText, session.EventText, session.EventToolUse,
		session.EventToolResult, session.EventText, session.EventResult}, enginetest.Kinds(evs))
	assert.Equal(t, "f64e0dff-0a65-4cb4-b9cd-d743d2790374", evs[0].Init.SessionID)
	assert.Equal(t, "mcp_gate_add_comment", evs[3].ToolName)
	assert.Equal(t, evs[3].ToolCallID, evs[4].ToolCallID)
	assert.False(t, evs[4].IsError)
	assert.Equal(t, "comment queued as output #1", evs[4].Output)
	assert.Equal(t, evs[2].MessageID, evs[3].MessageID)
	assert.NotEqual(t, evs[3].MessageID, evs[5].MessageID)
	r := evs[6].Result
	assert.Equal(t, "success", r.Subtype)
	assert.Equal(t, 2, r.NumTurns)
	assert.Equal(t, "done", r.Text)
	assert.Equal(t, int64(1607), r.DurationMS)
}

func TestMapLines(t *testing.T) {
	enginetest.RunCases(t, testMapper, []enginetest.Case{
		{Name: "deltas join into one text", Lines: `{"type":"message","role":"assistant","content":"Hel","delta":true}
{"type":"message","role":"assistant","content":"lo","delta":true}`,
			Want: []session.EventKind{session.EventText}, Check: func(t *testing.T, evs []session.Event) {
				assert.Equal(t, "Hello", evs[0].Text)
			}},
		{Name: "error result", Lines: `{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns"}}`,
			Want: []session.EventKind{session.EventResult}, Check: func(t *testing.T, evs []session.Event) {
				assert.True(t, evs[0].Result.IsError)
				assert.Equal(t, "Reached max session turns", evs[0].Result.Text)
			}},
		{Name: "failed tool", Lines: `{"type":"tool_use","tool_name":"read_file","tool_id":"t1","parameters":null}
{"type":"tool_result","tool_id":"t1","status":"error","error":{"type":"x","message":"path outside the workspace"}}`,
			Want: []session.EventKind{session.EventToolUse, session.EventToolResult}, Check: func(t *testing.T, evs []session.Event) {
				assert.JSONEq(t, `{}`, string(evs[0].Input))
				assert.True(t, evs[1].IsError)
				assert.Equal(t, "path outside the workspace", evs[1].Output)
			}},
		{Name: "warnings and unknown", Lines: `{"type":"error","severity":"warning","message":"Loop detected"}` + "\nnot json\n" + `{"type":"new"}`,
			Want: []session.EventKind{session.EventUnknown, session.EventUnknown, session.EventUnknown}},
	})
}

func TestSettingsAndArgs(t *testing.T) {
	spec := engine.Spec{GateCommand: []string{"/bin/runner", "mcp", "--config", "/r/gate.json"}, WorkDir: "/checkout"}
	files := []string{"/bin/runner", "mcp-files", "--root", "/checkout", "--tools", "read_file,edit_file"}
	s := Settings(spec, ".none.md", files, []string{"read_file", "edit_file"})
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"command":"/bin/runner","args":["mcp","--config","/r/gate.json"],"trust":true,"timeout":600000}`,
		string(mustJSON(t, s["mcpServers"].(map[string]any)["gate"])))
	assert.JSONEq(t, `{"command":"/bin/runner","args":["mcp-files","--root","/checkout","--tools","read_file,edit_file"],"trust":true,"timeout":600000}`,
		string(mustJSON(t, s["mcpServers"].(map[string]any)["files"])))
	assert.Contains(t, string(b), `"core":["read_file","mcp_gate_add_comment","mcp_gate_create_issue","mcp_gate_create_pull_request","mcp_gate_create_review","mcp_gate_push_to_pull_request","mcp_gate_add_labels","mcp_gate_remove_labels","mcp_gate_noop","mcp_files_read_file","mcp_files_edit_file"]`)
	assert.Contains(t, string(b), `"allowed":["gate","files"]`)
	assert.NotContains(t, strings.Join(Args(spec, true), " "), "/checkout", "the checkout is never part of the workspace")
	assert.Contains(t, strings.Join(Args(spec, true), " "), "--allowed-mcp-server-names gate,files")

	noFiles := Settings(spec, ".none.md", nil, []string{"read_file"})
	assert.NotContains(t, noFiles["mcpServers"], "files")
	assert.NotContains(t, string(mustJSON(t, noFiles)), "mcp_files_")
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func FuzzMap(f *testing.F) {
	enginetest.FuzzMapper(f, "testdata/allowed_comment.jsonl", func() enginetest.Mapper {
		m := newMapper("m")
		return enginetest.Mapper{Map: m.Map, Flush: m.Flush}
	})
}
