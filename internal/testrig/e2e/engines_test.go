package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/agent"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/gemini"
	fakeopenai "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/openai"
	"github.com/mention-runner/mention-runner/internal/testrig/hostile"
)

// fakeAPI is what TestFlowEnginePR reads from a fake provider.
type fakeAPI interface {
	AgentRequests() []fakemodel.Request
	Requests() []fakemodel.Request
	Close()
}

// TestFlowEnginePR: with the operator's pull-request tool set (Edit,
// Write), the real Codex CLI and the real Gemini CLI, each against its
// fake API, work on a hostile target repository (internal/testrig/hostile: hooks,
// settings, MCP servers, instructions and .env files for every CLI,
// committed on main). Each first tries to read and write outside its
// checkout — /etc, /proc, the run directory (its record, outputs.jsonl,
// the gate's config), its home, ".." — and is refused every time with
// nothing written; then reads the checkout, edits README.md, writes a new
// file and asks the gate for a pull request; the gate commits, publish
// pushes, and the pull request is opened on the simulator. Nothing from
// the repository runs, instructs the model or changes the API key. (One
// CLI start per engine carries the whole flow and the probes: each costs
// seconds of CPU.) Codex runs
// the product's default model, the path users get: Codex offers it the
// runner's tools only behind its tool_search, so the model searches
// first, and finds exactly the tools this run configured.
func TestFlowEnginePR(t *testing.T) {
	t.Parallel()
	needBins(t)
	for _, tc := range []struct {
		engine    string
		bin       func(testing.TB) string
		gate, fil func(string) string
		start     func(fakemodel.Script) (env []string, api fakeAPI)
		// search: the model must find the runner's tools with Codex's
		// tool_search first (they are deferred behind it)
		search bool
	}{
		{demo.EngineCodex, claudetest.Codex.Binary,
			func(s string) string { return contract.EngineToolName(s) },
			func(s string) string { return "mcp__" + contract.FilesServer + "__" + s },
			func(sc fakemodel.Script) ([]string, fakeAPI) {
				// no MR_MODEL: the product's default model, which Codex
				// offers its MCP tools to only through tool_search
				s := fakeopenai.New(sc).Start()
				return []string{"OPENAI_BASE_URL=" + s.URL() + "/v1", "OPENAI_API_KEY=" + claudetest.DummyAPIKey}, s
			}, true},
		{demo.EngineGemini, claudetest.GeminiCLI.Binary,
			func(s string) string { return gemini.ToolName(contract.GateServer, s) },
			func(s string) string { return gemini.ToolName(contract.FilesServer, s) },
			func(sc fakemodel.Script) ([]string, fakeAPI) {
				s := fakegemini.New(sc).Start()
				return []string{"GOOGLE_GEMINI_BASE_URL=" + s.URL(), "GEMINI_API_KEY=" + claudetest.DummyAPIKey, "MR_MODEL=gemini-fake"}, s
			}, false},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			t.Parallel()
			bin := tc.bin(t)
			outsideFile := filepath.Join(os.TempDir(), "mr-outside-"+strings.ReplaceAll(t.Name(), "/", "_"))
			t.Cleanup(func() { os.Remove(outsideFile) })
			fil := tc.fil
			// the run directory is the agent job's, known from the prompt
			runDir := func(req fakemodel.Request) string { return filepath.Dir(promptPath(t, req, contextFileRE)) }
			tries := []struct {
				tool string
				args func(req fakemodel.Request) map[string]any
			}{
				{fil(contract.ToolReadFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": "/etc/passwd"} }},
				{fil(contract.ToolReadFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": "/proc/self/environ"} }},
				{fil(contract.ToolReadFile), func(r fakemodel.Request) map[string]any {
					return map[string]any{"path": filepath.Join(runDir(r), agent.GateConfigFile)}
				}},
				{fil(contract.ToolReadFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": "../runs/context.json"} }},
				{fil(contract.ToolReadFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": "~/.gemini/settings.json"} }},
				{fil(contract.ToolListFiles), func(fakemodel.Request) map[string]any { return map[string]any{"path": "/etc"} }},
				{fil(contract.ToolSearchFiles), func(fakemodel.Request) map[string]any { return map[string]any{"pattern": "root", "path": "/etc"} }},
				{fil(contract.ToolWriteFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": outsideFile, "content": "x"} }},
				{fil(contract.ToolWriteFile), func(r fakemodel.Request) map[string]any {
					return map[string]any{"path": filepath.Join(runDir(r), contract.OutputsFile), "content": `{"kind":"comment"}`}
				}},
				{fil(contract.ToolWriteFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": "../escape.txt", "content": "x"} }},
				{fil(contract.ToolWriteFile), func(fakemodel.Request) map[string]any { return map[string]any{"path": "~/.bashrc", "content": "x"} }},
				{fil(contract.ToolEditFile), func(r fakemodel.Request) map[string]any {
					return map[string]any{"path": filepath.Join(runDir(r), agent.AgentContextFile), "old_string": "trigger_comment", "new_string": "x"}
				}},
			}
			// One model message carries every probe and the first read (each
			// its own call, checked on its own): a turn costs the CLI more
			// than a call.
			probeID := func(i int) string { return fmt.Sprintf("call_probe_%02d", i) }
			const readID = "call_read_readme"
			const title = "Fix the readme"
			first := 0 // the model's first turn with the runner's tools
			if tc.search {
				first = 1
			}
			script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
				switch req.Turn() - first {
				case -1:
					// what a model does when the tools it was told of are
					// not offered; the limit covers all nine (four gate, five
					// file tools), above Codex's default of 8
					return fakemodel.ToolCall("call_tool_search", "tool_search", map[string]any{
						"query": "read list search write edit files create pull request comment issue noop", "limit": 20})
				case 0:
					var calls []fakemodel.Block
					for i, tr := range tries {
						calls = append(calls, fakemodel.ToolUseBlock(probeID(i), tr.tool, tr.args(req)))
					}
					calls = append(calls, fakemodel.ToolUseBlock(readID, fil(contract.ToolReadFile), map[string]any{"path": "README.md"}))
					return fakemodel.Reply{Content: calls}
				case 1:
					return fakemodel.ToolCall("", fil(contract.ToolEditFile), map[string]any{"path": "README.md", "old_string": "# hostile", "new_string": "# fixed"})
				case 2:
					return fakemodel.ToolCall("", fil(contract.ToolWriteFile), map[string]any{"path": "src/fix.txt", "content": "fixed\n"})
				case 3:
					return fakemodel.ToolCall("", tc.gate(contract.ToolCreatePullRequest), map[string]any{"repo": demo.TargetRepo,
						"title": title, "body": "Fixes it.", "base": "main"})
				}
				return fakemodel.Text("I opened a pull request.")
			})
			env, fake := tc.start(script)
			t.Cleanup(fake.Close)
			c := flowCase{engine: tc.engine, extraEnv: env,
				comment:  "@" + demo.BotLogin + " !cfg repo=" + demo.TargetRepo + " no-issue\nLook outside, then fix the readme and open a pull request.",
				settings: []string{"MR_ALLOWED_TOOLS=Edit,Write"}}
			if tc.engine == demo.EngineCodex {
				c.codex = bin
			} else {
				c.gemini = bin
			}
			var canaryDir string
			var canaries []hostile.Canary
			c.prepare = func(w *demo.World) { canaryDir, canaries = pushHostileMain(t, w) }
			w, f := runFlow(t, c)

			o, err := record.ReadOutcome(f.RecordDir)
			require.NoError(t, err)
			assert.Equal(t, contract.StatusCompleted, o.Status)
			var prs []string
			for _, is := range w.Sim.Issues(demo.TargetRepo) {
				if is.IsPullRequest() {
					prs = append(prs, is.GetTitle())
				}
			}
			assert.Equal(t, []string{title}, prs, "the pull request is open on the target")
			assertAgentHasNoToken(t, f)

			// nothing of the hostile repository ran, instructed or configured
			assert.Empty(t, hostile.Traces(canaryDir, canaries), "the hostile repository ran or wrote something")
			for _, r := range fake.Requests() {
				assert.NotContains(t, string(r.Body), hostile.CLAUDEMDMarker, "request %d carries the repository's instructions", r.Seq)
				key := r.Header.Get("x-goog-api-key")
				if key == "" {
					key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				}
				assert.Equal(t, claudetest.DummyAPIKey, key, "the key is the runner's, not the repository's .env")
			}

			agentReqs := fake.AgentRequests()
			require.Len(t, agentReqs, first+5)
			var ours []string // the runner's tools this run configured
			for _, tool := range contract.GateTools {
				ours = append(ours, tc.gate(tool))
			}
			for _, tool := range append(append([]string{}, contract.ReadFileTools...), contract.WriteFileTools...) {
				ours = append(ours, fil(tool))
			}
			if tc.search {
				// the production path: the product's default model, our
				// tools deferred; the search finds all of them and nothing
				// else (it reveals only what the run configured)
				assert.Equal(t, codex.DefaultModel, agentReqs[0].Model)
				assert.Contains(t, agentReqs[0].ToolNames(), "tool_search")
				for _, tool := range ours {
					assert.NotContains(t, agentReqs[0].ToolNames(), tool, "deferred behind tool_search")
				}
				found, ok := agentReqs[1].ToolResult("call_tool_search")
				require.True(t, ok, "no result for the tool search")
				assert.ElementsMatch(t, ours, strings.Split(found.Content, "\n"))
				var added []string
				for _, tool := range agentReqs[1].ToolNames() {
					if !agentReqs[0].HasTool(tool) {
						added = append(added, tool)
					}
				}
				assert.ElementsMatch(t, ours, added)
				agentReqs = agentReqs[first:]

				// Codex reports no exec item for a tool search (0.169.0);
				// the engine reads it from Codex's rollout: the record has
				// the search and the run's own tool calls only, the
				// probes' refusals its only warnings, nothing denied
				evs, err := record.ReadEvents(filepath.Join(f.RecordDir, contract.EventsFile))
				require.NoError(t, err)
				var failed, searches int
				for _, e := range evs {
					if e.Type == contract.EventToolStarted {
						var d struct{ Name string }
						require.NoError(t, json.Unmarshal(e.Data, &d))
						if d.Name == codex.SearchTool {
							searches++
							continue
						}
						assert.Contains(t, ours, d.Name)
					}
					if e.Severity != record.SeverityInfo {
						assert.Equal(t, contract.EventToolFailed, e.Type, "%s: %s", e.Type, e.Summary)
						failed++
					}
				}
				assert.Equal(t, len(tries), failed, "only the probes failed")
				assert.Equal(t, 1, searches, "the search is in the record")
			}
			for _, tool := range ours {
				assert.Contains(t, agentReqs[0].ToolNames(), tool)
			}
			// outside the checkout: every probe refused, nothing written
			for i, tr := range tries {
				res, ok := agentReqs[1].ToolResult(probeID(i))
				require.True(t, ok, "no result for %s %v", tr.tool, tr.args(agentReqs[0]))
				assert.Contains(t, res.Content, "outside the checkout", "%s %v must be refused", tr.tool, tr.args(agentReqs[0]))
				assert.NotContains(t, res.Content, "root:x:0:0", "no /etc/passwd content")
				assert.NotContains(t, res.Content, "API_KEY", "no environment")
			}
			work := promptPath(t, agentReqs[0], workDirRE)
			run := filepath.Dir(promptPath(t, agentReqs[0], contextFileRE))
			assert.NoFileExists(t, outsideFile)
			assert.NoFileExists(t, filepath.Join(filepath.Dir(work), "escape.txt"))
			b, err := os.ReadFile(filepath.Join(run, agent.AgentContextFile))
			require.NoError(t, err)
			assert.Contains(t, string(b), "trigger_comment")

			// inside: the edit becomes the pull request, the only entry of
			// outputs.jsonl (the refused write added none)
			read, ok := agentReqs[1].ToolResult(readID)
			require.True(t, ok, "no result for the README read")
			assert.False(t, read.IsError, "reading README.md: %s", read.Content)
			for i := 2; i <= 4; i++ {
				rs := agentReqs[i].ToolResults()
				require.NotEmpty(t, rs)
				assert.False(t, rs[len(rs)-1].IsError, "turn %d: %s", i, rs[len(rs)-1].Content)
			}
			entries, err := outputs.ReadFile(filepath.Join(run, contract.OutputsFile))
			require.NoError(t, err)
			require.Len(t, entries, 1)
			assert.Equal(t, policy.KindPullRequest, entries[0].Kind)
			assert.Equal(t, "main", entries[0].Base)
			assert.Equal(t, 1, entries[0].Commits)
			assert.FileExists(t, filepath.Join(run, entries[0].Bundle))
			b, err = os.ReadFile(filepath.Join(work, "README.md"))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(b), "# fixed"))
			assert.FileExists(t, filepath.Join(work, "src", "fix.txt"))
		})
	}
}

var (
	contextFileRE = regexp.MustCompile("The thread's data is in the JSON file `([^`]+)`")
	workDirRE     = regexp.MustCompile("Your working directory `([^`]+)` is a checkout")
)

// promptPath is the path the runner's prompt names where re matches.
func promptPath(t *testing.T, req fakemodel.Request, re *regexp.Regexp) string {
	m := re.FindStringSubmatch(req.UserText())
	if m == nil {
		t.Errorf("the prompt does not match %s", re)
		return "/nonexistent"
	}
	return m[1]
}

// pushHostileMain commits the hostile repository (internal/testrig/hostile) onto
// the target's main before the mention is dispatched; it returns the
// canary directory and canaries.
func pushHostileMain(t *testing.T, w *demo.World) (string, []hostile.Canary) {
	t.Helper()
	owner, name, _ := strings.Cut(demo.TargetRepo, "/")
	return pushHostile(t, context.Background(), authorClient(w), owner, name, "main")
}

// pushHostile commits the hostile repository (internal/testrig/hostile) onto
// branch of owner/name, as one commit through the Git data API as gh's
// user; it returns the canary directory and canaries.
func pushHostile(t *testing.T, ctx context.Context, gh *github.Client, owner, name, branch string) (string, []hostile.Canary) {
	t.Helper()
	canaryDir, src := t.TempDir(), t.TempDir()
	canaries, err := hostile.WriteRepo(src, canaryDir, false)
	require.NoError(t, err)
	var entries []*github.TreeEntry
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := "100644"
		if info.Mode()&0o111 != 0 {
			mode = "100755"
		}
		rel, err := filepath.Rel(src, p)
		entries = append(entries, &github.TreeEntry{Path: github.String(filepath.ToSlash(rel)), Mode: github.String(mode),
			Type: github.String("blob"), Content: github.String(string(b))})
		return err
	}))
	ref, _, err := gh.Git.GetRef(ctx, owner, name, "heads/"+branch)
	require.NoError(t, err)
	parent, _, err := gh.Git.GetCommit(ctx, owner, name, ref.GetObject().GetSHA())
	require.NoError(t, err)
	tree, _, err := gh.Git.CreateTree(ctx, owner, name, parent.GetTree().GetSHA(), entries)
	require.NoError(t, err)
	commit, _, err := gh.Git.CreateCommit(ctx, owner, name, &github.Commit{Message: github.String("hostile"), Tree: tree,
		Parents: []*github.Commit{{SHA: parent.SHA}}}, nil)
	require.NoError(t, err)
	_, _, err = gh.Git.UpdateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/heads/" + branch),
		Object: &github.GitObject{SHA: commit.SHA}}, false)
	require.NoError(t, err)
	return canaryDir, canaries
}

// authorClient is a client of the mention's author, who can write to the
// target repository.
func authorClient(w *demo.World) *github.Client {
	const token = "ghp_e2e_author_000000000000000000000000"
	w.Sim.AddToken(token, demo.Author)
	return w.Sim.Client(token)
}
