package render

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/render/turns"
	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

var t0 = time.Date(2026, 4, 26, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// scripted is a small session: prompt, a reply with a successful and a
// failed tool call, then a final answer.
func scripted() []session.Event {
	return []session.Event{
		{Kind: session.EventInit, Time: at(0), Init: &session.Init{Model: "claude-sonnet-4", Tools: []string{"Bash", "Read"}}},
		{Kind: session.EventUserText, Time: at(0), Text: "Please list the files and fix the `README`."},
		{Kind: session.EventText, Time: at(1), MessageID: "msg_1", Text: "I'll look at the repository first."},
		{Kind: session.EventToolUse, Time: at(1), MessageID: "msg_1", ToolCallID: "toolu_1", ToolName: "Bash", Input: json.RawMessage(`{"command":"ls -la","description":"List files"}`)},
		{Kind: session.EventToolUse, Time: at(1), MessageID: "msg_1", ToolCallID: "toolu_2", ToolName: "Read", Input: json.RawMessage(`{"file_path":"/repo/MISSING.md"}`)},
		{Kind: session.EventToolResult, Time: at(2), ToolCallID: "toolu_1", Output: "README.md\nmain.go\n"},
		{Kind: session.EventToolResult, Time: at(3), ToolCallID: "toolu_2", Output: "File does not exist.", IsError: true},
		{Kind: session.EventText, Time: at(4), MessageID: "msg_2", Text: "Done: the README has a ```fenced``` example now.\n\n```go\nfmt.Println(\"unclosed\")"},
		{Kind: session.EventResult, Time: at(5), Result: &session.Result{Subtype: "success", NumTurns: 2}},
	}
}

// assemble builds the session the way the run record does.
func assemble(evs []session.Event) session.Session {
	a := turns.New(0)
	status := session.ToolPending
	for _, ev := range evs {
		a.Add(ev)
		if ev.Kind == session.EventResult {
			status = session.ToolCancelled
		}
	}
	a.Flush(status)
	return session.Session{ID: "sess_1", Status: session.StatusCompleted, Turns: a.Released()}
}

func TestGoldenNote(t *testing.T) {
	note := NoteBlock("acme/control", 42, "WhiteElephantIsNotARobot")
	assert.Contains(t, note, "acme/control#42  \n", "the second line ends with two spaces")
	body := WithNote("Here is the fix.\n\n```\nunclosed fence", "acme/control", 42, "WhiteElephantIsNotARobot", "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11", 3)
	golden.CheckString(t, filepath.Join("testdata", "note.golden"), note+"\n")
	golden.CheckString(t, filepath.Join("testdata", "with_note.golden"), body+"\n")
	job, idx, ok := contract.ParseOutputMarker(body)
	require.True(t, ok)
	assert.Equal(t, "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11", job)
	assert.Equal(t, 3, idx)
}

func TestGoldenSession(t *testing.T) {
	parts := SessionMarkdown(assemble(scripted()), SessionOptions{})
	require.Len(t, parts, 1)
	golden.CheckString(t, filepath.Join("testdata", "session.golden"), parts[0])
}

// bigSession has n assistant turns, each with a text and one tool call.
func bigSession(n, resultSize int) []session.Event {
	evs := []session.Event{{Kind: session.EventUserText, Text: "Do many things."}}
	for i := range n {
		id := "msg_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		call := "toolu_" + id
		evs = append(evs,
			session.Event{Kind: session.EventText, MessageID: id, Text: "Step " + strings.Repeat("•", 3) + " running the next command."},
			session.Event{Kind: session.EventToolUse, MessageID: id, ToolCallID: call, ToolName: "Bash", Input: json.RawMessage(`{"command":"echo step"}`)},
			session.Event{Kind: session.EventToolResult, ToolCallID: call, Output: strings.Repeat("output line ✓\n", resultSize/14)},
		)
	}
	return evs
}

func TestGoldenSplitSession(t *testing.T) {
	parts := SessionMarkdown(assemble(bigSession(6, 300)), SessionOptions{MaxPartBytes: 1500})
	require.Len(t, parts, 3)
	for _, p := range parts {
		assert.LessOrEqual(t, len(p), 1500)
		assert.True(t, strings.HasSuffix(p, "---\n"), "parts end at a turn boundary")
	}
	golden.CheckString(t, filepath.Join("testdata", "session_split.golden"), strings.Join(parts, "\n=== next part ===\n"))
}

func TestGoldenLongResult(t *testing.T) {
	evs := []session.Event{
		{Kind: session.EventUserText, Text: "Read it."},
		{Kind: session.EventToolUse, MessageID: "m1", ToolCallID: "c1", ToolName: "Read", Input: json.RawMessage(`{"file_path":"big.txt"}`)},
		{Kind: session.EventToolResult, ToolCallID: "c1", Output: strings.Repeat("0123456789", 30) + "é"},
		{Kind: session.EventToolUse, MessageID: "m2", ToolCallID: "c2", ToolName: "Grep", Input: json.RawMessage(`{"pattern":"x"}`)},
		{Kind: session.EventToolResult, ToolCallID: "c2", Output: `{"matches":["` + strings.Repeat("a", 200) + `"]}`},
	}
	parts := SessionMarkdown(assemble(evs), SessionOptions{MaxResultChars: 120})
	require.Len(t, parts, 1)
	assert.Contains(t, parts[0], CutNote(181))
	golden.CheckString(t, filepath.Join("testdata", "session_long_result.golden"), parts[0])
}

func TestGoldenErrors(t *testing.T) {
	golden.CheckString(t, filepath.Join("testdata", "error_runtime.golden"), ErrorRuntimeFor("claude", "API Error: 529 overloaded\n```\n@someone ## not a heading"))
	golden.CheckString(t, filepath.Join("testdata", "error_loop.golden"), ErrorLoop([]LoopCall{
		{Tool: "Bash", Args: `{"command":"npm test"}`, Count: 6},
		{Tool: "Read`x", Args: `not json`, Count: 2},
	}))
}

func sampleReport() Report {
	cost := 0.4321
	return Report{
		Target: "acme/app#12", TargetURL: "https://github.com/acme/app/issues/12",
		TriggerAuthor: "octocat", TriggerURL: "https://github.com/acme/app/issues/12#issuecomment-99",
		WorkflowRunURL: "https://github.com/acme/control/actions/runs/7",
		Engine:         "claude-code", Model: "claude-sonnet-4",
		Duration: 83*time.Second + 400*time.Millisecond, Turns: 7, CostUSD: &cost,
		Status: "completed", PolicyWords: "comment-limit=5 issue-limit=1 pr-limit=1 deny=acme/secret",
		Comments: []string{"https://github.com/acme/app/issues/12#issuecomment-1001"},
		Issues:   []string{"acme/app#456"},
		PRs:      []string{"acme/app#789", "agent/fork#3"},
		Repos:    []string{"acme/app", "foo/bar", "ACME/app", "agent/fork"},
		Refused:  []Refusal{{Index: 4, Kind: "issue", Repo: "acme/secret", Rule: "deny=acme/secret", Reason: "the repository is denied by !cfg"}},
		Denied:   2,
	}
}

func TestGoldenLogIssue(t *testing.T) {
	golden.CheckString(t, filepath.Join("testdata", "log_issue.golden"), LogIssueBody(sampleReport()))
	golden.CheckString(t, filepath.Join("testdata", "log_issue_empty.golden"), LogIssueBody(Report{Target: "acme/app#12", Status: "running"}))
}
