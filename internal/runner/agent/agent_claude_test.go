package agent

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
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

// Claude Code with the default tools reading the sanitized context, a
// here-only denial read as a tool error and the allowed comment queued and
// recorded is internal/testrig/e2e's TestFlowClaude: the same engine
// configuration (default tools, 8 turns), whose one CLI start also carries
// the whole flow. A run with nothing but the denial (no deliverable) is
// TestDeniedOnlyIsNoDeliverable, through the replay engine.

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
		return toolUse("Grep", map[string]any{"pattern": "docs"})
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
	assert.Equal(t, "Grep", out.Loop.Tool)
	assert.JSONEq(t, `{"pattern":"docs"}`, out.Loop.Args)
	assert.Contains(t, out.LoopExcerpt, "6 identical consecutive calls of Grep")
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
