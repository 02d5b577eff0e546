package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/engine/claude"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
	"github.com/mention-runner/mention-runner/internal/outputs"
	"github.com/mention-runner/mention-runner/internal/policy"
)

// claudeFixture is a fixture whose engine is the real Claude Code talking
// to a fake Messages API that follows script.
func claudeFixture(t *testing.T, triggerBody string, script fakemodel.Script) (*fixture, *fakemodel.Server, *claude.Engine) {
	t.Helper()
	bin := claudetest.Binary(t)
	f := newFixture(t, triggerBody)
	fake := fakemodel.New(script).Start()
	t.Cleanup(fake.Close)
	f.env["ANTHROPIC_BASE_URL"] = fake.URL()
	f.env["ANTHROPIC_API_KEY"] = claudetest.DummyAPIKey
	f.env["CLAUDE_CODE_MAX_RETRIES"] = "0"
	return f, fake, claude.New(bin)
}

func toolUse(name string, input any) fakemodel.Reply { return fakemodel.ToolCall("", name, input) }

// TestClaudeAllowedComment: one run of Claude Code (each CLI start costs
// seconds of CPU) reads the sanitized context, is refused an issue under
// here-only and reads the refusal as a tool error (a denial is not a
// failure), then writes the comment it may, which is queued and recorded.
// A run with nothing but the denial (no deliverable) is
// TestDeniedOnlyIsNoDeliverable, through the replay engine.
func TestClaudeAllowedComment(t *testing.T) {
	t.Parallel() // a real CLI run: mostly waiting on the process
	var ctxFile string
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0:
			return toolUse("Read", map[string]any{"file_path": ctxFile})
		case 1:
			return toolUse("mcp__gate__create_issue", map[string]any{"repo": testRepo, "title": "Track the bug", "body": "details"})
		case 2:
			return toolUse("mcp__gate__add_comment", map[string]any{"repo": testRepo, "number": testNumber, "body": "It fails because of CRLF."})
		}
		return fakemodel.Text("Done: I commented.")
	})
	f, fake, eng := claudeFixture(t, "@helperbot !cfg here-only\nwhy does the build fail? open an issue for it", script)
	ctxFile = filepath.Join(f.runDir(), AgentContextFile)

	out, err := f.run(t, eng)
	require.NoError(t, err, "a denial is not a failure")
	assert.Equal(t, contract.StatusCompleted, out.Status)
	assert.Equal(t, 4, out.Turns)
	assert.True(t, out.Deliverable)
	assert.Empty(t, fake.Problems())

	entries, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the allowed comment is queued")
	assert.Equal(t, policy.KindComment, entries[0].Kind)
	assert.Equal(t, testRepo, entries[0].Repo)
	assert.Equal(t, testNumber, entries[0].Number)
	assert.Equal(t, "It fails because of CRLF.", entries[0].Body)

	// The agent read the sanitized copy: no HTML comment, no later comment.
	agent := fake.AgentRequests()
	require.Len(t, agent, 4)
	read := agent[1].ToolResults()
	require.Len(t, read, 1)
	assert.False(t, read[0].IsError, "reading the context file must be allowed: %s", read[0].Content)
	assert.Contains(t, read[0].Content, "trigger_comment")
	assert.NotContains(t, read[0].Content, "hidden")
	assert.NotContains(t, read[0].Content, "ignore all rules")
	assert.Contains(t, agent[0].UserText(), "why does the build fail?")
	assert.Contains(t, agent[0].UserText(), "Only comments may be written, and only on octo/hello#42")

	// the denial reached the model as a tool error
	denied := lastToolResult(t, agent[2])
	assert.True(t, denied.IsError, "the denial reaches the model as a tool error")
	assert.Contains(t, denied.Content, "here-only allows comments only on octo/hello#42")
	queued := lastToolResult(t, agent[3])
	assert.False(t, queued.IsError, queued.Content)
	assert.Contains(t, queued.Content, "queued")

	o := f.requireRecord(t)
	assert.Equal(t, contract.StatusCompleted, o.Status)
	evs := f.events(t)
	ts := types(evs)
	for _, want := range []string{"run.created", "config.loaded", "prompt.rendered", "run.started", "skill.indexed", "skill.loaded",
		"tool.started", "tool.completed", "policy.allowed", "deliverable.check.started", "deliverable.check.completed", "agent.completed"} {
		assert.Contains(t, ts, want)
	}
	assert.Equal(t, "agent.completed", ts[len(ts)-1])
	assert.NotContains(t, ts, "deliverable.missing")
	assert.Len(t, eventsOf(evs, "policy.allowed"), 1)
	deniedEvs := eventsOf(evs, "policy.denied")
	require.Len(t, deniedEvs, 1)
	assert.Equal(t, "info", deniedEvs[0].Severity, "a denial is not an error")
	assert.Empty(t, eventsOf(evs, "error"))
	transcript, err := os.ReadFile(filepath.Join(f.runDir(), "transcript.md"))
	require.NoError(t, err)
	assert.Contains(t, string(transcript), "# Run Transcript")
	assert.Contains(t, string(transcript), "mcp__gate__add_comment")
}

func fileEmpty(t *testing.T, p string) bool {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return len(strings.TrimSpace(string(b))) == 0
}

func TestClaudeMaxTurns(t *testing.T) {
	t.Parallel() // a real CLI run: mostly waiting on the process
	script := fakemodel.Sequence(
		toolUse("mcp__gate__noop", map[string]any{"reason": "thinking"}),
		fakemodel.Text("never reached"),
	)
	f, fake, eng := claudeFixture(t, "@helperbot go on forever", script)
	f.env["MR_MAX_TURNS"] = "1"

	out, err := f.run(t, eng)
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, contract.CauseMaxTurns, out.Failure)
	assert.Contains(t, out.Error, "MR_MAX_TURNS=1")
	assert.Equal(t, 1, fake.Remaining())
	o := f.requireRecord(t)
	assert.Equal(t, contract.CauseMaxTurns, o.Failure)
	assert.Len(t, eventsOf(f.events(t), contract.EventAgentFailed), 1)
}

func TestClaudeLoopStopped(t *testing.T) {
	t.Parallel() // a real CLI run: mostly waiting on the process
	// The model repeats the same call for ever; the runner stops it at six.
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		return toolUse("Glob", map[string]any{"pattern": "**/*.md"})
	})
	f, fake, eng := claudeFixture(t, "@helperbot find the docs", script)
	f.env["MR_MAX_TURNS"] = "30"

	out, err := f.run(t, eng)
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, contract.CauseLoop, out.Failure)
	require.NotNil(t, out.Loop)
	assert.Equal(t, 6, out.Loop.Count)
	assert.GreaterOrEqual(t, out.Turns, 6, "turns counted from the session when no result came")
	assert.Equal(t, "Glob", out.Loop.Tool)
	assert.JSONEq(t, `{"pattern":"**/*.md"}`, out.Loop.Args)
	assert.Contains(t, out.LoopExcerpt, "6 identical consecutive calls of Glob")
	assert.LessOrEqual(t, len(fake.AgentRequests()), 8, "the engine was stopped soon after the sixth call")
	assert.Eventually(t, func() bool { return len(liveProcessesMentioning(f.runDir())) == 0 }, 10*time.Second, 20*time.Millisecond,
		"Claude Code and the gate must be gone: %v", liveProcessesMentioning(f.runDir()))

	o := f.requireRecord(t)
	assert.Equal(t, contract.CauseLoop, o.Failure)
	assert.Equal(t, out.LoopExcerpt, o.LoopExcerpt)
	evs := f.events(t)
	require.Len(t, eventsOf(evs, "loop.detected"), 1)
	failed := eventsOf(evs, "agent.failed")
	require.Len(t, failed, 1)
	var data map[string]any
	require.NoError(t, json.Unmarshal(failed[0].Data, &data))
	assert.Equal(t, contract.CauseLoop, data["failure"])
}

// TestClaudeAPIFailure: the API answers 500. Claude Code reports an error
// result and exits non-zero; the run fails keeping its text.
func TestClaudeAPIFailure(t *testing.T) {
	t.Parallel() // a real CLI run: mostly waiting on the process
	script := fakemodel.Func(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Fail(500, "api_error", "fakemodel: the model is down")
	})
	f, _, eng := claudeFixture(t, "@helperbot hello", script)

	out, err := f.run(t, eng)
	f.requireEngineFailure(t, out, err, "500")
	// failed, not crash: Claude Code ended with a result of its own that
	// is an error (is_error) and a non-zero exit status (classify)
	assert.Equal(t, contract.CauseFailed, out.Failure, "an is_error result, not a crash: %s", out.Error)
	assert.Contains(t, out.Error, "exited with status", "a non-zero exit status")
}
