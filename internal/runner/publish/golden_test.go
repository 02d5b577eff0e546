package publish

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/render/turns"
	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

const goldenJob = "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"

var goldenThread = thread{Repo: "acme/widgets", Number: 7, Author: "alice", TriggerURL: "https://github.com/acme/widgets/issues/7#issuecomment-99"}

func goldenOptions() Options {
	return Options{ControlRepo: "ops/control", ServerURL: "https://github.com", Engine: "claude",
		WorkflowRunURL: "https://github.com/ops/control/actions/runs/42", RunDir: "runs/run-1"}
}

func goldenRun() AgentRun {
	cost := 0.0421
	return AgentRun{Engine: "claude", Model: "claude-sonnet-4", Duration: 83 * time.Second, Turns: 4, CostUSD: &cost, Status: "completed", Denied: 1}
}

func TestGoldenLogIssueSuccess(t *testing.T) {
	pol := policy.Effective(policy.Flags{}, policy.Ceilings{CommentLimit: 3, IssueLimit: 1, PRLimit: 1, MaxWrites: 10}, policy.Thread{}, nil)
	res := &Result{Status: "completed", Written: []Written{
		{Index: 0, Kind: policy.KindComment, Repo: "acme/widgets", Number: 7, URL: "https://github.com/acme/widgets/issues/7#issuecomment-1001"},
		{Index: 1, Kind: policy.KindIssue, Repo: "acme/widgets", Number: 8, URL: "https://github.com/acme/widgets/issues/8"},
		{Index: 2, Kind: policy.KindPullRequest, Repo: "acme/widgets", Number: 9, HeadRepo: "mrbot/widgets"},
	}}
	body := render.LogIssueBody(buildReport(goldenThread, pol, nil, goldenRun(), res, goldenOptions()))
	golden.CheckString(t, filepath.Join("testdata", "log_issue_success.golden"), body)
	tr, err := render.ParseTrackingLists(body)
	require.NoError(t, err)
	assert.Equal(t, []string{"acme/widgets", "mrbot/widgets"}, tr.Repos)
}

func TestGoldenLogIssueFailure(t *testing.T) {
	flags, err := policy.ParseFlags([]string{"comment-only", "deny=acme/secret"})
	require.NoError(t, err)
	pol := policy.Effective(flags, policy.DefaultCeilings(), policy.Thread{}, nil)
	run := goldenRun()
	run.Status, run.Cause = "failed", contract.CauseLoop
	run.Loop = []render.LoopCall{{Tool: "Read", Args: `{"file_path":"a.go"}`, Count: 6}}
	res := &Result{Status: "failed", Cause: contract.CauseLoop,
		Refused: []render.Refusal{
			{Index: 1, Kind: "issue", Repo: "acme/widgets", Rule: policy.RuleCommentOnly, Reason: "denied: comment-only allows comments and reviews only, not a new issue in acme/widgets"},
			{Index: 2, Kind: "comment (#3)", Repo: "blocked/repo", Rule: policy.RuleRepoBlocked, Reason: `denied: blocked/repo is blocked by the opt-out entry "blocked/*"`},
			{Index: 3, Kind: "comment (#7)", Repo: "acme/widgets", Rule: RuleForgedMarker, Reason: "denied: the text carries a mention-runner idempotency marker, which only publish may write"},
		}}
	res.Reason = failureReason(run, res, goldenOptions())
	golden.CheckString(t, filepath.Join("testdata", "log_issue_failure.golden"), render.LogIssueBody(buildReport(goldenThread, pol, nil, run, res, goldenOptions())))
}

func goldenSession(n int) session.Session {
	a := turns.New(0)
	a.Add(session.Event{Kind: session.EventUserText, Text: "Please fix the widgets."})
	for i := range n {
		id := "msg_" + string(rune('a'+i))
		a.Add(session.Event{Kind: session.EventText, MessageID: id, Text: "Looking at step " + string(rune('1'+i)) + "."})
		a.Add(session.Event{Kind: session.EventToolUse, MessageID: id, ToolCallID: "t" + id, ToolName: "Read", Input: json.RawMessage(`{"file_path":"widgets.go"}`)})
		a.Add(session.Event{Kind: session.EventToolResult, ToolCallID: "t" + id, Output: strings.Repeat("package widgets // line\n", 20), IsError: i == 1})
	}
	a.Add(session.Event{Kind: session.EventText, MessageID: "msg_z", Text: "Done."})
	a.Flush(session.ToolCancelled)
	return session.Session{ID: "sess_1", Status: session.StatusCompleted, Turns: a.Released()}
}

// sessionComments are the log-issue comments as posted, markers included.
func sessionComments(s session.Session, o render.SessionOptions) []string {
	parts := render.SessionMarkdown(s, o)
	for i, p := range parts {
		parts[i] = withMarker(p, sessionKey(goldenJob, i))
	}
	return parts
}

func TestGoldenSession(t *testing.T) {
	parts := sessionComments(goldenSession(2), render.SessionOptions{})
	require.Len(t, parts, 1)
	golden.CheckString(t, filepath.Join("testdata", "session.golden"), parts[0])
}

func TestGoldenSessionSplit(t *testing.T) {
	parts := sessionComments(goldenSession(5), render.SessionOptions{MaxPartBytes: 1500})
	require.Greater(t, len(parts), 1)
	for i, p := range parts {
		job, idx, ok := contract.ParseOutputMarker(p)
		require.True(t, ok)
		assert.Equal(t, goldenJob+".session", job)
		assert.Equal(t, i, idx)
	}
	golden.CheckString(t, filepath.Join("testdata", "session_split.golden"), strings.Join(parts, "\n=== next comment ===\n"))
}

func TestGoldenErrors(t *testing.T) {
	tests := []struct {
		file string
		run  AgentRun
		res  Result
		o    func(*Options)
	}{
		{"error_runtime.golden", AgentRun{Cause: contract.CauseFailed, ErrorText: "claude exited with status 3\nAPI Error: 500 {\"type\":\"error\"}\nuse ``` carefully"}, Result{}, nil},
		{"error_loop.golden", AgentRun{Cause: contract.CauseLoop, Loop: []render.LoopCall{{Tool: "Read", Args: `{"file_path":"a.go"}`, Count: 6}}}, Result{}, nil},
		{"error_timeout.golden", AgentRun{Cause: contract.CauseTimeout, ErrorText: "context deadline exceeded after 30m0s"}, Result{}, nil},
		{"error_max_turns.golden", AgentRun{Cause: contract.CauseMaxTurns}, Result{}, nil},
		{"error_no_record.golden", AgentRun{}, Result{Problems: []string{"agent produced no record: runs/ has no run directory"}},
			func(o *Options) { o.RunDir, o.NoRecordReason = "", "no run directory in runs" }},
		{"error_publish.golden", AgentRun{}, Result{PublishProblems: []string{
			"output 2: comment on acme/widgets#7: POST https://api.github.com/repos/acme/widgets/issues/7/comments: 422 Validation Failed"}}, nil},
		{"error_nothing_written.golden", AgentRun{Cause: contract.CauseFailed, Status: "completed"}, Result{Cause: contract.CauseFailed, NothingWritten: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			o := goldenOptions()
			if tc.o != nil {
				tc.o(&o)
			}
			got := errorComments(tc.run, &tc.res, o)
			require.Len(t, got, 1, "one error comment per cause")
			golden.CheckString(t, filepath.Join("testdata", tc.file), got[0].body)
		})
	}
	assert.Empty(t, errorComments(AgentRun{Denied: 3}, &Result{}, goldenOptions()), "denials are not errors")
	// a crash that also wrote nothing is one comment, not a stack
	crash := errorComments(AgentRun{Cause: contract.CauseFailed, Status: "failed", ErrorText: "claude exited with status 3"},
		&Result{Cause: contract.CauseFailed, Problems: []string{"x"}}, goldenOptions())
	require.Len(t, crash, 1)
	assert.NotContains(t, crash[0].body, HeadingPublish)
}

func TestFailureReason(t *testing.T) {
	o := goldenOptions()
	cases := []struct {
		name string
		run  AgentRun
		res  Result
		o    func(*Options)
		want string
	}{
		{"completed", AgentRun{}, Result{}, nil, ""},
		{"loop", AgentRun{Cause: contract.CauseLoop, Loop: []render.LoopCall{{Tool: "Read", Count: 6}}}, Result{Cause: contract.CauseLoop}, nil,
			"loop detected: 6 identical consecutive calls of Read; the runner stopped the engine"},
		{"crash keeps the engine's first line", AgentRun{Cause: contract.CauseFailed, ErrorText: "claude exited with status 3\nstack…"}, Result{Cause: contract.CauseFailed}, nil,
			"the engine failed: claude exited with status 3"},
		{"max turns", AgentRun{Cause: contract.CauseMaxTurns, ErrorText: "Reached maximum number of turns (1)\n(the runner's…)"}, Result{Cause: contract.CauseMaxTurns}, nil,
			"the engine used every turn it was allowed (MR_MAX_TURNS): Reached maximum number of turns (1)"},
		{"nothing written", AgentRun{Status: "completed"}, Result{Cause: contract.CauseFailed, NothingWritten: true}, nil, nothingWritten},
		{"no record", AgentRun{}, Result{Cause: contract.CauseFailed}, func(o *Options) { o.RunDir, o.NoRecordReason = "", "no run directory in runs" },
			"the agent job left no run record: no run directory in runs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oo := o
			if c.o != nil {
				c.o(&oo)
			}
			assert.Equal(t, c.want, failureReason(c.run, &c.res, oo))
		})
	}
}

func TestGoldenStepSummary(t *testing.T) {
	pol := policy.Effective(policy.Flags{}, policy.DefaultCeilings(), policy.Thread{}, nil)
	res := &Result{Status: "completed", Written: []Written{{Index: 0, Kind: policy.KindComment, Repo: "acme/widgets", Number: 7, URL: "https://github.com/acme/widgets/issues/7#issuecomment-1001"}}}
	r := buildReport(goldenThread, pol, nil, goldenRun(), res, goldenOptions())
	got := render.StepSummary(r, render.SessionMarkdown(goldenSession(1), render.SessionOptions{}))
	assert.Less(t, len(got), render.MaxStepSummaryBytes)
	golden.CheckString(t, filepath.Join("testdata", "step_summary.golden"), got)
}
