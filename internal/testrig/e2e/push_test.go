package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// TestFlowClaudePush: the real Claude Code, against its fake API, writes a
// file in the pull request's checkout and asks for push_to_pull_request;
// the gate commits it as one commit on the recorded head, publish puts that
// commit on the pull request's own branch (a non-forced ref update) and
// the log issue lists it under Pushed Commits.
func TestFlowClaudePush(t *testing.T) {
	t.Parallel()
	needBins(t)
	real := claudetest.Binary(t)
	const fixFile, fixText = "FIX.md", "Line endings are normalized by .gitattributes.\n"
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0:
			return fakemodel.ToolCall("", "Write", map[string]any{"file_path": fixFile, "content": fixText})
		case 1:
			return fakemodel.ToolCall("", contract.EngineToolName(contract.ToolPushToPullRequest),
				map[string]any{"repo": demo.TargetRepo, "number": 1, "message": "Document the line-ending fix"})
		}
		return fakemodel.Text("I pushed the fix onto this pull request.")
	})
	fake := fakemodel.New(script).Start()
	t.Cleanup(fake.Close)
	w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: real, pr: true,
		prepare:  func(w *demo.World) { w.Sim.SetPermission(demo.TargetRepo, demo.BotLogin, "write") },
		comment:  "@" + demo.BotLogin + " !cfg no-issue\nPlease fix it in this PR.",
		settings: []string{"MR_ALLOWED_TOOLS=Edit,Write", "MR_ALLOW_PUSH=true"},
		extraEnv: []string{"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey, "CLAUDE_CODE_MAX_RETRIES=0"}})
	assert.Empty(t, fake.Problems())
	agent := fake.AgentRequests()
	require.Len(t, agent, 3)
	assert.Contains(t, agent[0].UserText(), "`push_to_pull_request`: allowed: onto the branch of acme/widgets#1 only")
	rs := agent[2].ToolResults()
	require.NotEmpty(t, rs)
	queued := rs[len(rs)-1]
	assert.False(t, queued.IsError, queued.Content)
	assert.Contains(t, queued.Content, "will be pushed onto the branch of acme/widgets#1")

	o, err := record.ReadOutcome(f.RecordDir)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, o.Status)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gh := w.Sim.Client(demo.BotToken)
	ref, _, err := gh.Git.GetRef(ctx, "acme", "widgets", "heads/"+demo.PRBranch)
	require.NoError(t, err)
	tip, _, err := gh.Git.GetCommit(ctx, "acme", "widgets", ref.GetObject().GetSHA())
	require.NoError(t, err)
	assert.Equal(t, demo.BotLogin+"@users.noreply.github.com", tip.GetAuthor().GetEmail())
	assert.Contains(t, tip.GetMessage(), "Document the line-ending fix")
	file, _, _, err := gh.Repositories.GetContents(ctx, "acme", "widgets", fixFile, &github.RepositoryContentGetOptions{Ref: demo.PRBranch})
	require.NoError(t, err)
	got, err := file.GetContent()
	require.NoError(t, err)
	assert.Equal(t, fixText, got)
	log, ok := w.Sim.Issue(demo.ControlRepo, f.LogIssue)
	require.True(t, ok)
	tr, err := render.ParseTrackingLists(log.GetBody())
	require.NoError(t, err)
	require.Len(t, tr.Pushed, 1)
	assert.Contains(t, tr.Pushed[0], "acme/widgets@"+ref.GetObject().GetSHA()[:12]+" (acme/widgets#1)")
	assertAgentHasNoToken(t, f)
}
