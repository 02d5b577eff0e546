package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

// streamLog is a short Claude Code stream-json log.
const streamLog = `{"type":"system","subtype":"init","session_id":"cc","model":"claude-sonnet-4","tools":["Bash"],"mcp_servers":[]}
{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"Listing files."}]}}
{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go\nb.go","is_error":false}]}}
{"type":"assistant","message":{"id":"msg_2","content":[{"type":"text","text":"Two files."}]}}
{"type":"result","subtype":"success","is_error":false,"num_turns":2}
`

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(streamLog), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestRenderUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"neither", []string{"render"}, 2, "exactly one of"},
		{"both", []string{"render", "--run", "x", "--from-stream", "y"}, 2, "exactly one of"},
		{"bad limit", []string{"render", "--from-stream", "-", "--max-result-chars", "0"}, 2, "positive"},
		{"missing run", []string{"render", "--run", "/nonexistent/run"}, 1, "no such file"},
		{"missing log", []string{"render", "--from-stream", "/nonexistent/log"}, 1, "open stream log"},
		{"help", []string{"render", "--help"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCmd(c.args...)
			assert.Equal(t, c.code, code, errOut)
			assert.Contains(t, errOut, c.msg)
		})
	}
}

func TestRenderFromStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(streamLog), 0o644))
	code, fromFile, errOut := runCmd("render", "--from-stream", path)
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(fromFile, "## Session\n\n[Assistant]\nListing files.\n"), fromFile)
	assert.Contains(t, fromFile, "<summary>[ToolCall] Bash(command=\"ls\") — success</summary>")
	assert.Contains(t, fromFile, "[Assistant]\nTwo files.\n\n---\n")
	code, fromStdin, _ := runCmd("render", "--from-stream", "-")
	require.Equal(t, 0, code)
	assert.Equal(t, fromFile, fromStdin)
}

func TestRenderRun(t *testing.T) {
	dir := t.TempDir()
	r, err := record.Open(dir, record.Meta{RunID: "run_1", SessionID: "sess_1", TaskID: "job_1"}, nil)
	require.NoError(t, err)
	b := record.NewBuilder(r, session.Session{ID: "sess_1"})
	evs := []session.Event{{Kind: session.EventUserText, Text: "hello"}}
	for i := range 40 { // enough to need several comments
		id := "toolu_" + strings.Repeat("x", i)
		evs = append(evs,
			session.Event{Kind: session.EventToolUse, MessageID: "m" + id, ToolCallID: id, ToolName: "Read", Input: json.RawMessage(`{"n":1}`)},
			session.Event{Kind: session.EventToolResult, ToolCallID: id, Output: strings.Repeat("line of output\n", 250)})
	}
	for _, ev := range evs {
		require.NoError(t, b.Add(ev))
	}
	require.NoError(t, b.Finish())
	require.NoError(t, b.WriteSessionJSON(filepath.Join(dir, contract.SessionFile)))
	require.NoError(t, r.Close())

	code, _, errOut := runCmd("render", "--run", dir)
	require.Equal(t, 0, code, errOut)
	transcript, err := os.ReadFile(filepath.Join(dir, contract.TranscriptFile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(transcript), "# Run Transcript\n"))
	md, err := os.ReadFile(filepath.Join(dir, SessionMarkdownFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Session (part 2 of ")
	assert.Equal(t, strings.Count(string(md), "## Session (part"), strings.Count(string(md), "end of part")+1)

	code, _, _ = runCmd("render", "--run", dir)
	require.Equal(t, 0, code)
	again, err := os.ReadFile(filepath.Join(dir, contract.TranscriptFile))
	require.NoError(t, err)
	assert.Equal(t, string(transcript), string(again), "render --run is deterministic")
}

// TestRenderRealCapture renders a real Claude Code 2.1.197 session (run
// against internal/testrig/fakemodel): a command that fails, a gate denial, a call
// the engine refuses and the final result all show.
func TestRenderRealCapture(t *testing.T) {
	path := filepath.Join("..", "..", "internal", "runner", "agent", "streamjson", "testdata", "mixed.jsonl")
	code, out, errOut := runCmd("render", "--from-stream", path)
	require.Equal(t, 0, code, errOut)
	golden.CheckString(t, filepath.Join("testdata", "render_mixed.golden"), out)
	for _, want := range []string{
		`[ToolCall] Bash(command="ls /nonexistent-mention-runner-dir", description="list a missing dir") — failed`,
		"Exit code 2\nls: cannot access '/nonexistent-mention-runner-dir': No such file or directory",
		`[ToolCall] mcp__gate__add_comment(body="elsewhere DENY") — failed`,
		"denied by policy: here-only allows comments on the current thread only",
		`[ToolCall] Bash(command="rm -rf /tmp/mention-runner-mixed", description="remove") — failed`,
		"[System]\nResult: success · 4 turns · $0.003 · ",
		" · refused by the engine: Bash\n",
	} {
		assert.Contains(t, out, want)
	}

	// the turn limit, the engine's own words and thinking
	code, out, errOut = runCmd("render", "--from-stream", filepath.Join("..", "..", "internal", "runner", "agent", "streamjson", "testdata", "max_turns.jsonl"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "Result: error (error_max_turns: the turn limit was reached) · 2 turns · $0.00075 · 0.1 s\nReached maximum number of turns (1)\n")
	code, out, _ = runCmd("render", "--from-stream", filepath.Join("..", "..", "internal", "runner", "agent", "streamjson", "testdata", "gate_success.jsonl"))
	require.Equal(t, 0, code)
	assert.Contains(t, out, "<details>\n<summary>Thinking</summary>\n\n```text\nThe user wants a comment.\n```\n\n</details>\n")
}

// TestRenderNotAStream: a file that is not stream-json is an error naming
// its first bad line, exit 2, never an empty session.
func TestRenderNotAStream(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, content, msg string }{
		{"markdown", "# Title\n\ntext\n", "line 1 is not a Claude Code stream-json event: not JSON"},
		{"events.jsonl", `{"event_id":"evt_1","sequence":1,"type":"run.created"}` + "\n", `line 1 is not a Claude Code stream-json event: type "run.created"`},
		{"bad line later", streamLog[:strings.Index(streamLog, "\n")+1] + "[1,2]\n", "line 2 is not a Claude Code stream-json event: not a JSON object"},
		{"no type", `{"message":"hi"}` + "\n", `line 1 is not a Claude Code stream-json event: no "type" field`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
			code, out, errOut := runCmd("render", "--from-stream", path)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, c.msg)
			assert.NotContains(t, out, "(no messages)")
		})
	}
	code, _, errOut := runCmd("render", "--from-stream", filepath.Join("..", "..", "README.md"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "line 1 is not a Claude Code stream-json event")
}

// TestRenderEdgeGolden pins the rendering of a log full of edge cases
// (secrets behind escapes and markup, JSON results, odd content blocks,
// escapes and invalid UTF-8 in arguments), so speed work cannot change a byte.
func TestRenderEdgeGolden(t *testing.T) {
	code, out, errOut := runCmd("render", "--from-stream", filepath.Join("testdata", "render_edge.jsonl"))
	require.Equal(t, 0, code, errOut)
	golden.CheckString(t, filepath.Join("testdata", "render_edge.golden"), out)
	assert.NotContains(t, out, "a1B2a1B2a1B2a1B2a1B2", "no token survives")
}
