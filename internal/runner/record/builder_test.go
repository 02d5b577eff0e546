package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// script is a Claude Code session as the engine reports it.
func script() []session.Event {
	return []session.Event{
		{Kind: session.EventInit, Time: at(0), Init: &session.Init{SessionID: "cc-1", Model: "claude-sonnet-4", Tools: []string{"Bash", "Read", "mcp__gate__comment"},
			MCPServers: []session.MCPServer{{Name: "gate", Status: "connected"}, {Name: "broken", Status: "failed"}}}},
		{Kind: session.EventUserText, Time: at(0), Text: "Summarise the failing test and comment here."},
		{Kind: session.EventText, Time: at(100), MessageID: "msg_1", Text: "Running the tests."},
		{Kind: session.EventToolUse, Time: at(120), MessageID: "msg_1", ToolCallID: "toolu_1", ToolName: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`)},
		{Kind: session.EventToolResult, Time: at(1620), ToolCallID: "toolu_1", Output: "--- FAIL: TestX\nFAIL", IsError: true},
		{Kind: session.EventToolUse, Time: at(1700), MessageID: "msg_2", ToolCallID: "toolu_2", ToolName: "mcp__gate__comment", Input: json.RawMessage(`{"body":"TestX fails: nil map"}`)},
		{Kind: session.EventToolResult, Time: at(1750), ToolCallID: "toolu_2", Output: `{"queued":true,"index":0}`},
		{Kind: session.EventToolUse, Time: at(1800), MessageID: "msg_3", ToolCallID: "toolu_3", ToolName: "Read", Input: json.RawMessage(`{"file_path":"x_test.go"}`)},
		{Kind: session.EventText, Time: at(1900), MessageID: "msg_4", Text: "I commented on the issue."},
		{Kind: session.EventResult, Time: at(2000), Result: &session.Result{Subtype: "success", NumTurns: 4, DurationMS: 2000}},
	}
}

func TestBuilder(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	b := NewBuilder(r, session.Session{ID: "sess_1", CreatedAt: t0, UserID: "octocat", MemoryEnabled: false})
	for _, ev := range script() {
		require.NoError(t, b.Add(ev))
	}
	mid := b.Session()
	assert.Equal(t, session.StatusCompleted, mid.Status)
	require.NoError(t, b.Finish())
	require.NoError(t, b.Finish(), "Finish is idempotent")
	assert.Error(t, b.Add(session.Event{Kind: session.EventText}))
	require.NoError(t, r.Close())

	evs, err := ReadEvents(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	assert.Equal(t, []string{"skill.indexed", "skill.loaded", "skill.loaded", "tool.started", "tool.failed",
		"tool.started", "tool.completed", "tool.started", "engine.result"}, types)
	assert.Equal(t, SeverityWarning, evs[2].Severity, "a failed MCP server is a warning")
	assert.Equal(t, "toolu_1", evs[4].CorrelationID)
	assert.Equal(t, evs[3].EventID, evs[4].ParentEventID)
	var d struct {
		DurationMS int64 `json:"duration_ms"`
	}
	require.NoError(t, json.Unmarshal(evs[4].Data, &d))
	assert.Equal(t, int64(1500), d.DurationMS)

	tools, _, err := ReadTools(filepath.Join(dir, contract.ToolsFile))
	require.NoError(t, err)
	require.Len(t, tools, 3)
	assert.Equal(t, []string{"error", "done", "cancelled"}, []string{tools[0].Status, tools[1].Status, tools[2].Status})

	s := b.Session()
	assert.Equal(t, "Summarise the failing test and comment here.", s.Intent)
	assert.Equal(t, "claude-sonnet-4", *s.Model)
	require.Len(t, s.Turns, 6)
	assert.Equal(t, []string{"user", "assistant", "assistant", "assistant", "assistant", "system"},
		[]string{s.Turns[0].Role, s.Turns[1].Role, s.Turns[2].Role, s.Turns[3].Role, s.Turns[4].Role, s.Turns[5].Role})
	assert.Equal(t, session.ToolError, s.Turns[1].ToolCalls[0].Status)
	assert.Equal(t, session.ToolCancelled, s.Turns[3].ToolCalls[0].Status)

	path := filepath.Join(dir, contract.SessionFile)
	require.NoError(t, b.WriteSessionJSON(path))
	var back session.Session
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, len(s.Turns), len(back.Turns))
	assert.Equal(t, render.SessionMarkdown(s, render.SessionOptions{}), render.SessionMarkdown(back, render.SessionOptions{}),
		"session.json renders the same as the live session")
}

func TestBuilderInterrupted(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	b := NewBuilder(r, session.Session{ID: "sess_1"})
	for _, ev := range script()[:4] {
		require.NoError(t, b.Add(ev))
	}
	require.NoError(t, b.Finish())
	require.NoError(t, r.Close())
	assert.False(t, b.ended)
	assert.Equal(t, session.StatusRunning, b.Session().Status, "the caller decides: stopped or crashed")
	b.SetStatus(session.StatusInterrupted)
	assert.Equal(t, session.StatusInterrupted, b.Session().Status)
	tools, _, err := ReadTools(filepath.Join(dir, contract.ToolsFile))
	require.NoError(t, err)
	require.Len(t, tools, 1)
	assert.Equal(t, "cancelled", tools[0].Status, "a call nothing will finish is cancelled")
}

func TestBuilderContextWindow(t *testing.T) {
	r := open(t, t.TempDir())
	b := NewBuilder(r, session.Session{ID: "sess_1"})
	evs := script()
	last := evs[len(evs)-1]
	require.Equal(t, session.EventResult, last.Kind)
	res := *last.Result
	res.ContextWindow = 200000
	last.Result = &res
	for _, ev := range append(evs[:len(evs)-1], last) {
		require.NoError(t, b.Add(ev))
	}
	require.NoError(t, b.Finish())
	for _, turn := range b.Session().Turns {
		assert.Equal(t, 200000, turn.ContextWindow, turn.ID)
	}
}

// writeRun records a whole run the way the runner does.
func writeRun(t *testing.T, dir string) {
	r := open(t, dir)
	_, err := r.Emit("run.started", "runner", SeverityInfo, "run started", nil)
	require.NoError(t, err)
	b := NewBuilder(r, session.Session{ID: "sess_1", CreatedAt: t0})
	for _, ev := range script() {
		require.NoError(t, b.Add(ev))
	}
	require.NoError(t, b.Finish())
	require.NoError(t, b.WriteSessionJSON(filepath.Join(dir, contract.SessionFile)))
	require.NoError(t, r.Error(ErrorRecord{Kind: "gate", Message: "comment-limit reached on acme/app#12", Recoverable: true}))
	_, err = r.Emit("run.completed", "runner", SeverityInfo, "run completed", nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	start, end := t0, t0.Add(2*time.Second)
	require.NoError(t, WriteMeta(dir, RunMeta{
		RunID: "run_1", JobID: meta.TaskID, SessionID: "sess_1",
		Target: "acme/app#12", TargetURL: "https://github.com/acme/app/issues/12",
		TriggerAuthor: "octocat", TriggerURL: "https://github.com/acme/app/issues/12#issuecomment-99",
		WorkflowRunURL: "https://github.com/acme/control/actions/runs/7",
		Engine:         "claude-code", StartedAt: &start, EndedAt: &end, Status: "completed",
		Prompt:      "@bot !cfg comment-only\nSummarise the failing test and comment here.\n```\nunclosed",
		PolicyWords: "comment-only comment-limit=5",
		Deliverables: render.Tracking{Comments: []string{"https://github.com/acme/app/issues/12#issuecomment-1001"},
			Repos: []string{"acme/app"}},
	}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, contract.OutputsFile), []byte(`{"index":0,"kind":"comment"}`+"\n"), 0o644))
}

func TestTranscriptGolden(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	run, err := LoadRun(dir)
	require.NoError(t, err)
	got := RenderTranscript(run.Transcript())
	golden.CheckString(t, filepath.Join("testdata", "transcript.golden"), got)

	require.NoError(t, WriteTranscript(dir, run.Transcript()))
	again, err := LoadRun(dir)
	require.NoError(t, err)
	assert.Equal(t, got, RenderTranscript(again.Transcript()), "rebuilding is deterministic")
}

func TestLoadRunWithoutMeta(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	require.NoError(t, os.Remove(filepath.Join(dir, contract.MetaFile)))
	f, err := os.OpenFile(filepath.Join(dir, contract.ToolsFile), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"x","na`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	run, err := LoadRun(dir)
	require.NoError(t, err)
	tr := run.Transcript()
	assert.Equal(t, "run_1", tr.Meta.RunID)
	assert.Equal(t, meta.TaskID, tr.Meta.JobID)
	assert.Equal(t, "completed", tr.Meta.Status)
	assert.Equal(t, "claude-sonnet-4", tr.Meta.Model)
	assert.Contains(t, RenderTranscript(tr), "logs/tools.jsonl: line 4")

	_, err = LoadRun(t.TempDir())
	assert.ErrorIs(t, err, os.ErrNotExist)
}
