package codex

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/engine"
	"github.com/mention-runner/mention-runner/internal/session"
	"github.com/mention-runner/mention-runner/internal/streamjson"
)

func decodeAll(t *testing.T, in []byte) []session.Event {
	t.Helper()
	m := newMapper("gpt-fake")
	dec := streamjson.NewDecoder(bytes.NewReader(in))
	dec.Map = m.Map
	var out []session.Event
	for {
		ev, err := dec.Next()
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

func kinds(evs []session.Event) []session.EventKind {
	var out []session.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// TestMapRealCapture: a denied gate call, as Codex 0.169.0 printed it.
func TestMapRealCapture(t *testing.T) {
	b, err := os.ReadFile("testdata/denied_comment.jsonl")
	require.NoError(t, err)
	evs := decodeAll(t, b)
	require.Equal(t, []session.EventKind{session.EventInit, session.EventUnknown, session.EventUnknown, session.EventText,
		session.EventToolUse, session.EventToolResult, session.EventText, session.EventResult}, kinds(evs))
	assert.Equal(t, "01a204f5-1728-76e3-8d51-fec2f91db16a", evs[0].Init.SessionID)
	use, res := evs[4], evs[5]
	assert.Equal(t, "mcp__gate__add_comment", use.ToolName)
	assert.JSONEq(t, `{"body":"DENY hello from codex"}`, string(use.Input))
	assert.Equal(t, use.ToolCallID, res.ToolCallID)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Output, "here-only")
	assert.Equal(t, evs[3].MessageID, use.MessageID, "text and call of one response are one turn")
	assert.NotEqual(t, use.MessageID, evs[6].MessageID, "after a tool result a new turn starts")
	r := evs[7].Result
	require.NotNil(t, r)
	assert.Equal(t, "success", r.Subtype)
	assert.Equal(t, 2, r.NumTurns)
	assert.Equal(t, "done", r.Text)
	assert.Equal(t, &session.Usage{InputTokens: 200, OutputTokens: 20}, evs[7].Usage)
}

func TestMapLines(t *testing.T) {
	tests := []struct {
		name  string
		lines string
		want  []session.EventKind
		check func(t *testing.T, evs []session.Event)
	}{
		{"turn failed keeps the message", `{"type":"error","message":"Reconnecting... 1/5"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: invalid key"}}`,
			[]session.EventKind{session.EventUnknown, session.EventResult}, func(t *testing.T, evs []session.Event) {
				assert.True(t, evs[1].Result.IsError)
				assert.Equal(t, "unexpected status 401 Unauthorized: invalid key", evs[1].Result.Text)
				assert.Contains(t, evs[0].Text, "Reconnecting")
			}},
		{"shell command", `{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls","status":"in_progress"}}
{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls","aggregated_output":"boom","exit_code":2,"status":"failed"}}`,
			[]session.EventKind{session.EventToolUse, session.EventToolResult}, func(t *testing.T, evs []session.Event) {
				assert.Equal(t, ShellTool, evs[0].ToolName)
				assert.JSONEq(t, `{"command":"ls"}`, string(evs[0].Input))
				assert.True(t, evs[1].IsError)
				assert.Equal(t, "boom", evs[1].Output)
			}},
		{"completed without started", `{"type":"item.completed","item":{"id":"i9","type":"mcp_tool_call","server":"gate","tool":"noop","arguments":null,"error":{"message":"server gone"},"status":"failed"}}`,
			[]session.EventKind{session.EventToolUse, session.EventToolResult}, func(t *testing.T, evs []session.Event) {
				assert.JSONEq(t, `{}`, string(evs[0].Input))
				assert.Equal(t, "server gone", evs[1].Output)
			}},
		{"malformed and unknown", "not json\n" + `{"type":"brand.new"}` + "\n" + `{"type":"item.completed","item":{"type":"todo_list"}}`,
			[]session.EventKind{session.EventUnknown, session.EventUnknown, session.EventUnknown}, nil},
		{"reasoning", `{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"hmm"}}`,
			[]session.EventKind{session.EventThinking}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := decodeAll(t, []byte(tc.lines))
			require.Equal(t, tc.want, kinds(evs))
			if tc.check != nil {
				tc.check(t, evs)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	e := New("codex")
	args := strings.Join(e.Args(engine.Spec{GateCommand: []string{"/bin/runner", "mcp", "--config", `/r/"q".json`}}, "/w", "http://127.0.0.1:1/v1",
		[]string{"/bin/runner", "mcp-files", "--root", "/c", "--tools", "read_file"}), " ")
	for _, want := range []string{"exec --json", "--ignore-user-config", "--ignore-rules", "--ephemeral", "-C /w", "-s read-only",
		`approval_policy="never"`, `web_search="disabled"`, "project_doc_max_bytes=0", "--disable shell_tool", "--disable hooks",
		`mcp_servers.gate={command="/bin/runner",args=["mcp","--config","/r/\"q\".json"],default_tools_approval_mode="approve"`,
		`mcp_servers.files={command="/bin/runner",args=["mcp-files","--root","/c","--tools","read_file"],default_tools_approval_mode="approve"`,
		`model_providers.mention-runner={name="mention-runner",base_url="http://127.0.0.1:1/v1"`, "-m " + DefaultModel + " -"} {
		assert.Contains(t, args, want)
	}
	assert.NotContains(t, args, "request_max_retries", "retries stay Codex's unless set")
	assert.NotContains(t, strings.Join(e.Args(engine.Spec{GateCommand: []string{"/bin/runner"}}, "/w", "", nil), " "), "mcp_servers.files")
}

func FuzzMap(f *testing.F) {
	b, err := os.ReadFile("testdata/denied_comment.jsonl")
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(`{"type":"item.completed","item":{"type":"mcp_tool_call","arguments":"x","result":{"content":[{"type":"image"}]}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		m := newMapper("m")
		for i, line := range bytes.Split(in, []byte("\n")) {
			for _, ev := range m.Map(line, i+1, time.Time{}) {
				if ev.Kind == session.EventToolUse && len(ev.Input) == 0 {
					t.Fatalf("tool use without input: %q", line)
				}
			}
		}
	})
}
