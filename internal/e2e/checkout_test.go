package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/agent"
	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/demo"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
)

// TestFlowClaudePRFromPR: the bot is mentioned on a pull request and the
// agent (real Claude Code, Write only) reads a file of the PR's head, adds
// a file and asks for a pull request. From a fork's pull request the fetch
// job hands over the fork's head and main's tip, and publish opens a pull
// request into main carrying the agent's change alone: one commit, one
// file, none of the fork's commits (PR_ONLY.md), built on main as it is
// now (CHANGELOG.md, committed after the fork branched off, is no part of
// the diff). From a same-repository pull request it stacks on the PR's
// head branch, again with only the agent's commit. Both read a file that
// exists only on the PR's head: the fetch job fetched the recorded head
// commit, not the default branch, with the bot's token; the agent job has
// none. The same-repository case runs the replay engine (bash cat and
// printf instead of Read and Write): Claude Code's part is the fork case's.
func TestFlowClaudePRFromPR(t *testing.T) {
	t.Parallel()
	needBins(t)
	real := claudetest.Binary(t)
	const fixFile, fixText = "FIX.md", "Line endings are normalised by .gitattributes.\n"
	for _, tc := range []struct {
		name     string
		fork     bool
		wantBase string
		claude   bool // the real Claude Code; else the replay engine does the same reads and writes
	}{
		{"fork PR goes into main", true, "main", true},
		// What Claude Code itself proves here (its Read and Write in the
		// PR's checkout becoming the agent's change) the fork case shows;
		// this case is about where publish puts that change, so the replay
		// engine makes it (one CLI start less per make test).
		{"same-repo PR stacks on its branch", false, demo.PRBranch, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !tc.claude {
				script := filepath.Join(t.TempDir(), "replay.jsonl")
				require.NoError(t, os.WriteFile(script, []byte(strings.Join([]string{
					`{"bash": "cat ` + demo.PROnlyFile + `"}`,
					`{"bash": "printf '` + strings.TrimSuffix(fixText, "\n") + `\\n' > ` + fixFile + `"}`,
					`{"tool": "create_pull_request", "args": {"repo": "` + demo.TargetRepo + `", "title": "Document the line-ending fix", "body": "Adds ` + fixFile + `."}}`,
					`{"text": "Done."}`}, "\n")), 0o644))
				w, f := runFlow(t, flowCase{engine: demo.EngineReplay, script: script, pr: true, fork: tc.fork,
					comment:  "@" + demo.BotLogin + " please document the line-ending fix in a pull request",
					settings: []string{"MR_ALLOWED_TOOLS=Bash"}})
				transcript, err := os.ReadFile(filepath.Join(f.AgentRunDir, "transcript.md"))
				require.NoError(t, err)
				assert.Contains(t, string(transcript), strings.TrimSpace(demo.PROnlyContent), "the agent read %s from the PR's head", demo.PROnlyFile)
				assertPRFromPR(t, w, f, tc.wantBase, fixFile, fixText)
				return
			}
			script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
				switch req.Turn() {
				case 0:
					return fakemodel.ToolCall("", "Read", map[string]any{"file_path": demo.PROnlyFile})
				case 1:
					return fakemodel.ToolCall("", "Write", map[string]any{"file_path": fixFile, "content": fixText})
				case 2:
					return fakemodel.ToolCall("", "mcp__gate__create_pull_request", map[string]any{
						"repo": demo.TargetRepo, "title": "Document the line-ending fix", "body": "Adds " + fixFile + "."})
				}
				return fakemodel.Text("Done.")
			})
			fake := fakemodel.New(script).Start()
			t.Cleanup(fake.Close)
			w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: real, pr: true, fork: tc.fork,
				comment:  "@" + demo.BotLogin + " please document the line-ending fix in a pull request",
				settings: []string{"MR_ALLOWED_TOOLS=Edit,Write"},
				extraEnv: []string{"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey, "CLAUDE_CODE_MAX_RETRIES=0"}})
			// the agent read the PR's code
			read := false
			for _, r := range fake.Requests() {
				for _, b := range r.ToolResults() {
					read = read || (!b.IsError && strings.Contains(b.Content, strings.TrimSpace(demo.PROnlyContent)))
				}
			}
			assert.True(t, read, "the agent read %s from the PR's head", demo.PROnlyFile)

			assertPRFromPR(t, w, f, tc.wantBase, fixFile, fixText)
		})
	}
}

// assertPRFromPR: what TestFlowClaudePRFromPR checks of a flow whatever
// the engine: the fetch job (not the agent) held the token and read the
// diff at the recorded head, and publish opened one pull request into
// wantBase carrying the agent's file alone.
func assertPRFromPR(t *testing.T, w *demo.World, f *demo.Flow, wantBase, fixFile, fixText string) {
	t.Helper()
	require.NotNil(t, f.Fetched)
	assertAgentHasNoToken(t, f)
	assert.Contains(t, strings.Join(f.Fetched.Env, "\n"), "BOT_TOKEN=", "the fetch job holds the bot's token")

	// The diff in the agent's context is the one the fetch job read at
	// the recorded head (the dispatched context has none): the PR's
	// own change, none of main's later commits.
	var seen struct {
		Diff       string `json:"diff"`
		Truncation struct {
			Total     int64 `json:"diff_bytes_total"`
			Truncated *bool `json:"diff_truncated"`
		} `json:"truncation"`
	}
	b, err := os.ReadFile(filepath.Join(f.AgentRunDir, agent.AgentContextFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &seen))
	assert.Contains(t, seen.Diff, "+++ b/"+demo.PROnlyFile)
	assert.NotContains(t, seen.Diff, demo.MainOnlyFile)
	assert.Equal(t, int64(len(seen.Diff)), seen.Truncation.Total)
	require.NotNil(t, seen.Truncation.Truncated)
	assert.False(t, *seen.Truncation.Truncated)
	dispatched, err := os.ReadFile(filepath.Join(f.ContextDir, "context.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(dispatched), `"diff"`)
	assert.Contains(t, f.Fetched.Stdout, "diff against ")

	var prs []int
	for _, is := range w.Sim.Issues(demo.TargetRepo) {
		if is.IsPullRequest() && is.GetUser().GetLogin() == demo.BotLogin {
			prs = append(prs, is.GetNumber())
		}
	}
	require.Len(t, prs, 1, "the bot opened one pull request")
	gh := w.Sim.Client(demo.BotToken)
	ctx := context.Background()
	owner, name, _ := strings.Cut(demo.TargetRepo, "/")
	pr, _, err := gh.PullRequests.Get(ctx, owner, name, prs[0])
	require.NoError(t, err)
	assert.Equal(t, wantBase, pr.GetBase().GetRef())
	assert.Equal(t, 1, pr.GetCommits(), "only the agent's commit")
	assert.Equal(t, 1, pr.GetChangedFiles())
	diff, _, err := gh.PullRequests.GetRaw(ctx, owner, name, prs[0], github.RawOptions{Type: github.Diff})
	require.NoError(t, err)
	assert.Contains(t, diff, "+++ b/"+fixFile)
	assert.Contains(t, diff, strings.TrimSpace(fixText))
	assert.NotContains(t, diff, demo.PROnlyFile, "none of the PR's own commits")
	assert.NotContains(t, diff, demo.MainOnlyFile, "built on the base's tip")
}
