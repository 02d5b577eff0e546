package codex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/enginetest"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

func testMapper() enginetest.Mapper { return enginetest.Mapper{Map: newMapper("gpt-fake").Map} }

// TestMapRealCapture: a denied gate call, as Codex 0.169.0 printed it.
func TestMapRealCapture(t *testing.T) {
	evs := enginetest.DecodeFile(t, "testdata/denied_comment.jsonl", testMapper())
	require.Equal(t, []session.EventKind{session.EventInit, session.EventUnknown, session.EventUnknown, session.EventText,
		session.EventToolUse, session.EventToolResult, session.EventText, session.EventResult}, enginetest.Kinds(evs))
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
	enginetest.RunCases(t, testMapper, []enginetest.Case{
		{Name: "turn failed keeps the message", Lines: `{"type":"error","message":"Reconnecting... 1/5"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: invalid key"}}`,
			Want: []session.EventKind{session.EventUnknown, session.EventResult}, Check: func(t *testing.T, evs []session.Event) {
				assert.True(t, evs[1].Result.IsError)
				assert.Equal(t, "unexpected status 401 Unauthorized: invalid key", evs[1].Result.Text)
				assert.Contains(t, evs[0].Text, "Reconnecting")
			}},
		{Name: "shell command", Lines: `{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls","status":"in_progress"}}
{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls","aggregated_output":"boom","exit_code":2,"status":"failed"}}`,
			Want: []session.EventKind{session.EventToolUse, session.EventToolResult}, Check: func(t *testing.T, evs []session.Event) {
				assert.Equal(t, ShellTool, evs[0].ToolName)
				assert.JSONEq(t, `{"command":"ls"}`, string(evs[0].Input))
				assert.True(t, evs[1].IsError)
				assert.Equal(t, "boom", evs[1].Output)
			}},
		{Name: "completed without started", Lines: `{"type":"item.completed","item":{"id":"i9","type":"mcp_tool_call","server":"gate","tool":"noop","arguments":null,"error":{"message":"server gone"},"status":"failed"}}`,
			Want: []session.EventKind{session.EventToolUse, session.EventToolResult}, Check: func(t *testing.T, evs []session.Event) {
				assert.JSONEq(t, `{}`, string(evs[0].Input))
				assert.Equal(t, "server gone", evs[1].Output)
			}},
		{Name: "malformed and unknown", Lines: "not json\n" + `{"type":"brand.new"}` + "\n" + `{"type":"item.completed","item":{"type":"todo_list"}}`,
			Want: []session.EventKind{session.EventUnknown, session.EventUnknown, session.EventUnknown}},
		{Name: "reasoning", Lines: `{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"hmm"}}`,
			Want: []session.EventKind{session.EventThinking}},
	})
}

func TestArgs(t *testing.T) {
	e := New("codex")
	args := strings.Join(e.Args(engine.Spec{GateCommand: []string{"/bin/runner", "mcp", "--config", `/r/"q".json`}}, "/w", "http://127.0.0.1:1/v1",
		[]string{"/bin/runner", "mcp-files", "--root", "/c", "--tools", "read_file"}), " ")
	for _, want := range []string{"exec --json", "--ignore-user-config", "--ignore-rules", "-C /w", "-s read-only",
		`approval_policy="never"`, `web_search="disabled"`, "project_doc_max_bytes=0", "--disable shell_tool", "--disable hooks",
		"--disable shell_snapshot", // no login shell at start
		`mcp_servers.gate={command="/bin/runner",args=["mcp","--config","/r/\"q\".json"],default_tools_approval_mode="approve"`,
		`mcp_servers.files={command="/bin/runner",args=["mcp-files","--root","/c","--tools","read_file"],default_tools_approval_mode="approve"`,
		`model_providers.mention-runner={name="mention-runner",base_url="http://127.0.0.1:1/v1"`, "-m " + DefaultModel + " -"} {
		assert.Contains(t, args, want)
	}
	assert.NotContains(t, args, "request_max_retries", "retries stay Codex's unless set")
	assert.NotContains(t, args, "--ephemeral", "the rollout is where the engine reads the tool searches")
	assert.NotContains(t, strings.Join(e.Args(engine.Spec{GateCommand: []string{"/bin/runner"}}, "/w", "", nil), " "), "mcp_servers.files")
}

func FuzzMap(f *testing.F) {
	enginetest.FuzzMapper(f, "testdata/denied_comment.jsonl", func() enginetest.Mapper { return enginetest.Mapper{Map: newMapper("m").Map} },
		[]byte(`{"type":"item.completed","item":{"type":"mcp_tool_call","arguments":"x","result":{"content":[{"type":"image"}]}}}`))
}
