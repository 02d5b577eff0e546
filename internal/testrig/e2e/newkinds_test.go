package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/gemini"
)

// TestFlowClaudeReview: the real Claude Code, against the fake Messages
// API, reviews the pull request it was mentioned on. Its first review puts
// an inline comment on a line outside the diff: the gate denies it at
// once, naming the hunks that exist; the second, on the added line, is
// queued, re-checked by publish against the diff it reads again at the
// recorded head, and posted as one COMMENT review on that commit, listed
// under Created Comments by its URL.
func TestFlowClaudeReview(t *testing.T) {
	t.Parallel()
	needBins(t)
	real := claudetest.Binary(t)
	review := func(line int) map[string]any {
		return map[string]any{"repo": demo.TargetRepo, "number": 1, "body": "One note on the new file.",
			"comments": []map[string]any{{"path": demo.PROnlyFile, "line": line, "body": "Say why this file exists only on the branch."}}}
	}
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0:
			return fakemodel.ToolCall("", contract.EngineToolName(contract.ToolCreateReview), review(7))
		case 1:
			return fakemodel.ToolCall("", contract.EngineToolName(contract.ToolCreateReview), review(1))
		}
		return fakemodel.Text("I reviewed the pull request.")
	})
	fake := fakemodel.New(script).Start()
	t.Cleanup(fake.Close)
	w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: real, pr: true, extraEnv: []string{
		"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey, "CLAUDE_CODE_MAX_RETRIES=0",
	}, comment: "@" + demo.BotLogin + " !cfg here-only\nPlease review this pull request."})
	assert.Empty(t, fake.Problems())

	agent := fake.AgentRequests()
	require.Len(t, agent, 3)
	assert.Contains(t, agent[0].UserText(), "`create_review`: allowed: on acme/widgets#1 only")
	denied := agent[1].ToolResults()
	require.Len(t, denied, 1)
	assert.True(t, denied[0].IsError)
	assert.Contains(t, denied[0].Content, "PR_ONLY.md line 7 (RIGHT) is not in the pull request's diff; its hunks show RIGHT lines 1")
	queued := agent[2].ToolResults()
	require.Len(t, queued, 2)
	assert.False(t, queued[1].IsError, queued[1].Content)

	rs := w.Sim.Reviews(demo.TargetRepo, w.Issue)
	require.Len(t, rs, 1)
	assert.Equal(t, "COMMENTED", rs[0].State)
	assert.Equal(t, demo.BotLogin, rs[0].Author)
	require.Len(t, rs[0].Comments, 1)
	assert.Equal(t, demo.PROnlyFile, rs[0].Comments[0].Path)
	assert.Contains(t, rs[0].Body, "> [!NOTE]")
	o, err := record.ReadOutcome(f.RecordDir)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, o.Status)
	log, ok := w.Sim.Issue(demo.ControlRepo, f.LogIssue)
	require.True(t, ok)
	tr, err := render.ParseTrackingLists(log.GetBody())
	require.NoError(t, err)
	require.Len(t, tr.Comments, 1)
	assert.Contains(t, tr.Comments[0], "/pull/1#pullrequestreview-")
	assertAgentHasNoToken(t, f)
}

// TestFlowTriage: the real Claude Code and the real Gemini CLI, each
// against its fake API, add labels the repository has (one it lacks is
// denied at the gate) and remove one; none is created, and the log issue
// lists the changes.
func TestFlowTriage(t *testing.T) {
	t.Parallel()
	needBins(t)
	for _, tc := range []struct {
		engine string
		tool   func(string) string
		start  func(t *testing.T, sc fakemodel.Script) (flowCase, fakeAPI)
	}{
		{demo.EngineClaude, contract.EngineToolName, func(t *testing.T, sc fakemodel.Script) (flowCase, fakeAPI) {
			fake := fakemodel.New(sc).Start()
			return flowCase{engine: demo.EngineClaude, claude: claudetest.Binary(t), extraEnv: []string{
				"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey, "CLAUDE_CODE_MAX_RETRIES=0"}}, fake
		}},
		{demo.EngineGemini, func(s string) string { return gemini.ToolName(contract.GateServer, s) }, func(t *testing.T, sc fakemodel.Script) (flowCase, fakeAPI) {
			fake := fakegemini.New(sc).Start()
			return flowCase{engine: demo.EngineGemini, gemini: claudetest.GeminiCLI.Binary(t), extraEnv: []string{
				"GOOGLE_GEMINI_BASE_URL=" + fake.URL(), "GEMINI_API_KEY=" + claudetest.DummyAPIKey, "MR_MODEL=gemini-fake"}}, fake
		}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			t.Parallel()
			labels := func(names ...string) map[string]any {
				return map[string]any{"repo": demo.TargetRepo, "number": 1, "labels": names}
			}
			script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
				switch req.Turn() {
				case 0:
					return fakemodel.ToolCall("", tc.tool(contract.ToolAddLabels), labels("bug", "crlf"))
				case 1:
					return fakemodel.ToolCall("", tc.tool(contract.ToolAddLabels), labels("bug", "windows"))
				case 2:
					return fakemodel.ToolCall("", tc.tool(contract.ToolRemoveLabels), labels("needs-triage"))
				}
				return fakemodel.Text("Triaged.")
			})
			c, fake := tc.start(t, script)
			t.Cleanup(fake.Close)
			c.comment = "@" + demo.BotLogin + " !cfg no-pr no-issue\nPlease triage this issue."
			c.prepare = func(w *demo.World) {
				w.Sim.SetPermission(demo.TargetRepo, demo.BotLogin, "triage")
				for _, l := range []string{"bug", "windows", "needs-triage"} {
					require.NoError(t, w.Sim.CreateLabel(demo.TargetRepo, l, ""))
				}
				w.Sim.AddIssueLabels(demo.TargetRepo, w.Issue, "needs-triage")
			}
			w, f := runFlow(t, c)
			agent := fake.AgentRequests()
			require.Len(t, agent, 4)
			denied := agent[1].ToolResults()
			require.NotEmpty(t, denied)
			assert.True(t, denied[len(denied)-1].IsError)
			assert.Contains(t, denied[len(denied)-1].Content, `acme/widgets has no label`)
			assert.Contains(t, denied[len(denied)-1].Content, `crlf`)

			assert.Equal(t, []string{"bug", "windows"}, w.Sim.IssueLabels(demo.TargetRepo, w.Issue))
			assert.Equal(t, []string{"bug", "windows", "needs-triage"}, w.Sim.RepoLabels(demo.TargetRepo), "no label created")
			o, err := record.ReadOutcome(f.RecordDir)
			require.NoError(t, err)
			assert.Equal(t, contract.StatusCompleted, o.Status)
			log, ok := w.Sim.Issue(demo.ControlRepo, f.LogIssue)
			require.True(t, ok)
			tr, err := render.ParseTrackingLists(log.GetBody())
			require.NoError(t, err)
			assert.Equal(t, []string{"acme/widgets#1 +bug +windows", "acme/widgets#1 -needs-triage"}, tr.Labels)
			assert.True(t, strings.Contains(log.GetBody(), "Label Changes:"))
			assertAgentHasNoToken(t, f)
		})
	}
}
