package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/agent"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	"github.com/mention-runner/mention-runner/internal/testrig/hostile"
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
			// The fork's head carries the hostile repository (internal/testrig/hostile).
			// First the agent tries to read and write outside its checkout
			// — /etc, /proc (the job's environment), the run directory (its
			// record, outputs.jsonl, the gate's config), its home, ".." — and
			// is refused every time; then it reads the PR's file, writes a
			// draft and edits it (the edit is what the pull request carries).
			var canaryDir string
			var canaries []hostile.Canary
			prHead := func(ctx context.Context, gh *github.Client, owner, name, branch string) error {
				canaryDir, canaries = pushHostile(t, ctx, gh, owner, name, branch)
				return nil
			}
			outsideFile := filepath.Join(os.TempDir(), "mr-outside-"+strings.ReplaceAll(t.Name(), "/", "_"))
			t.Cleanup(func() { os.Remove(outsideFile) })
			runDir := func(req fakemodel.Request) string { return filepath.Dir(promptPath(t, req, contextFileRE)) }
			tries := []struct {
				tool string
				args func(req fakemodel.Request) map[string]any
			}{
				{"Read", func(fakemodel.Request) map[string]any { return map[string]any{"file_path": "/etc/passwd"} }},
				{"Read", func(fakemodel.Request) map[string]any { return map[string]any{"file_path": "/proc/self/environ"} }},
				{"Read", func(r fakemodel.Request) map[string]any {
					return map[string]any{"file_path": filepath.Join(runDir(r), agent.GateConfigFile)}
				}},
				{"Read", func(fakemodel.Request) map[string]any { return map[string]any{"file_path": "../runs/context.json"} }},
				{"Read", func(fakemodel.Request) map[string]any { return map[string]any{"file_path": "~/.claude.json"} }},
				{"Glob", func(fakemodel.Request) map[string]any { return map[string]any{"pattern": "*", "path": "/etc"} }},
				{"Grep", func(fakemodel.Request) map[string]any { return map[string]any{"pattern": "root", "path": "/etc"} }},
				{"Write", func(fakemodel.Request) map[string]any {
					return map[string]any{"file_path": outsideFile, "content": "x"}
				}},
				// outputs.jsonl: its only entry afterwards is the gate's pull request
				{"Write", func(r fakemodel.Request) map[string]any {
					return map[string]any{"file_path": filepath.Join(runDir(r), contract.OutputsFile), "content": `{"kind":"comment"}`}
				}},
				{"Write", func(fakemodel.Request) map[string]any {
					return map[string]any{"file_path": "../escape.txt", "content": "x"}
				}},
				{"Write", func(fakemodel.Request) map[string]any {
					return map[string]any{"file_path": "~/.bashrc", "content": "x"}
				}},
				{"Edit", func(r fakemodel.Request) map[string]any {
					return map[string]any{"file_path": filepath.Join(runDir(r), agent.AgentContextFile), "old_string": "trigger_comment", "new_string": "x"}
				}},
			}
			// One assistant message carries every probe and both reads (each
			// its own tool call, checked on its own): a turn costs the CLI
			// more than a call.
			probeID := func(i int) string { return fmt.Sprintf("toolu_probe_%02d", i) }
			const readPR, readReadme = "toolu_read_pr", "toolu_read_readme"
			const draft = "draft\n"
			script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
				switch req.Turn() {
				case 0:
					var calls []fakemodel.Block
					for i, tr := range tries {
						calls = append(calls, fakemodel.ToolUseBlock(probeID(i), tr.tool, tr.args(req)))
					}
					calls = append(calls, fakemodel.ToolUseBlock(readPR, "Read", map[string]any{"file_path": demo.PROnlyFile}),
						fakemodel.ToolUseBlock(readReadme, "Read", map[string]any{"file_path": "README.md"}))
					return fakemodel.Reply{Content: calls}
				case 1:
					return fakemodel.ToolCall("", "Write", map[string]any{"file_path": fixFile, "content": draft})
				case 2:
					return fakemodel.ToolCall("", "Edit", map[string]any{"file_path": fixFile, "old_string": draft, "new_string": fixText})
				case 3:
					return fakemodel.ToolCall("", "mcp__gate__create_pull_request", map[string]any{
						"repo": demo.TargetRepo, "title": "Document the line-ending fix", "body": "Adds " + fixFile + "."})
				}
				return fakemodel.Text("Done.")
			})
			fake := fakemodel.New(script).Start()
			t.Cleanup(fake.Close)
			w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: real, pr: true, fork: tc.fork, prHead: prHead,
				comment:  "@" + demo.BotLogin + " please document the line-ending fix in a pull request",
				settings: []string{"MR_ALLOWED_TOOLS=Edit,Write", "MR_MAX_TURNS=30"},
				extraEnv: []string{"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey, "CLAUDE_CODE_MAX_RETRIES=0"}})
			o, err := record.ReadOutcome(f.RecordDir)
			require.NoError(t, err)
			assert.Equal(t, contract.StatusCompleted, o.Status)

			// nothing of the hostile head ran (not the git hooks either: the
			// gate committed in that checkout) or reached the model as guidance
			assert.Empty(t, hostile.Traces(canaryDir, canaries), "the hostile repository ran or wrote something")
			agentReqs := fake.AgentRequests()
			for _, req := range agentReqs {
				assert.NotContains(t, req.System, hostile.CLAUDEMDMarker, "CLAUDE.md reached the system prompt")
			}
			require.Len(t, agentReqs, 5)
			assert.NotContains(t, agentReqs[0].UserText(), hostile.CLAUDEMDMarker, "CLAUDE.md reached the first user message")
			result := func(i int, id string) fakemodel.Block {
				rs := agentReqs[i].ToolResults()
				require.NotEmpty(t, rs)
				if id == "" {
					return rs[len(rs)-1]
				}
				r, ok := agentReqs[i].ToolResult(id)
				require.True(t, ok, "no result for %s", id)
				return r
			}

			// outside the checkout: every probe refused, nothing written
			for i, tr := range tries {
				res := result(1, probeID(i))
				assert.True(t, res.IsError, "%s %v must be refused, got: %.300s", tr.tool, tr.args(agentReqs[0]), res.Content)
				assert.NotContains(t, res.Content, "root:x:0:0", "no /etc/passwd content")
				assert.NotContains(t, res.Content, "ANTHROPIC_API_KEY", "no environment")
			}
			work := promptPath(t, agentReqs[0], workDirRE)
			run := runDir(agentReqs[0])
			assert.NoFileExists(t, outsideFile)
			assert.NoFileExists(t, filepath.Join(filepath.Dir(work), "escape.txt"))
			b, err := os.ReadFile(filepath.Join(run, agent.AgentContextFile))
			require.NoError(t, err)
			assert.Contains(t, string(b), "trigger_comment")

			// inside: the PR's file and the hostile README read, the draft
			// written and edited, the pull request asked for
			for i, r := range []fakemodel.Block{result(1, readPR), result(1, readReadme), result(2, ""), result(3, ""), result(4, "")} {
				assert.False(t, r.IsError, "call %d inside the checkout: %s", i, r.Content)
			}
			assert.Contains(t, result(1, readPR).Content, strings.TrimSpace(demo.PROnlyContent), "the agent read %s from the PR's head", demo.PROnlyFile)
			assert.Contains(t, result(1, readReadme).Content, "# hostile", "the checkout is the PR's (hostile) head")
			b, err = os.ReadFile(filepath.Join(work, fixFile))
			require.NoError(t, err)
			assert.Equal(t, fixText, string(b), "the edit landed in the checkout")
			entries, err := outputs.ReadFile(filepath.Join(run, contract.OutputsFile))
			require.NoError(t, err)
			require.Len(t, entries, 1, "the gate's pull request is the only entry")
			assert.Equal(t, policy.KindPullRequest, entries[0].Kind)
			assert.Equal(t, "main", entries[0].Base)
			assert.Equal(t, 1, entries[0].Commits)
			assert.FileExists(t, filepath.Join(run, entries[0].Bundle))

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
