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

	"github.com/mention-runner/mention-runner/internal/cli"
	"github.com/mention-runner/mention-runner/internal/record"
	"github.com/mention-runner/mention-runner/internal/session"
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
	require.NoError(t, b.WriteSessionJSON(filepath.Join(dir, record.SessionFile)))
	require.NoError(t, r.Close())

	code, _, errOut := runCmd("render", "--run", dir)
	require.Equal(t, 0, code, errOut)
	transcript, err := os.ReadFile(filepath.Join(dir, record.TranscriptFile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(transcript), "# Run Transcript\n"))
	md, err := os.ReadFile(filepath.Join(dir, SessionMarkdownFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Session (part 2 of ")
	assert.Equal(t, strings.Count(string(md), "## Session (part"), strings.Count(string(md), "end of part")+1)

	code, _, _ = runCmd("render", "--run", dir)
	require.Equal(t, 0, code)
	again, err := os.ReadFile(filepath.Join(dir, record.TranscriptFile))
	require.NoError(t, err)
	assert.Equal(t, string(transcript), string(again), "render --run is deterministic")
}
