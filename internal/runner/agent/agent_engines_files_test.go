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

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	"github.com/mention-runner/mention-runner/internal/testrig/hangguard"
	"github.com/mention-runner/mention-runner/internal/testrig/hostile"
)

// TestEngineReadsCheckout: by default the engine reads the checkout
// through the runner's file tools and is offered no tool that changes a
// file. The checkout is the hostile repository of internal/testrig/hostile (which
// carries the Codex and Gemini project files too), so the same run (one
// CLI start: each costs seconds of CPU) shows the engine reads GEMINI.md
// and AGENTS.md as data, loads none of the project files as configuration
// or instructions, starts nothing from them, and talks only to the
// configured API with the runner's key; for Gemini, that the CLI's own
// read tools stay in their workspace. The same run then asks for an issue
// under here-only: the gate refuses it and the model reads the refusal (a
// denial is not a failure); the comment the model writes instead is
// queued and recorded. And the CLI's processes, seen from /proc while the
// model is asked, hold none of the runner's GitHub or Actions credentials.
func TestEngineReadsCheckout(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		var f *fixture
		var own []probe // the engine's own read tools, tried on what they must not reach
		if ce.name == gemini.Name {
			own = geminiOwnReadProbes(func() *fixture { return f })
		}
		var seen [][]string
		var url string
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			switch n := req.Turn(); {
			case n == 0:
				seen = environsMentioning(url)
				return toolUse(ce.fileTool(contract.ToolReadFile), map[string]any{"path": "README.md"})
			case n == 1:
				return toolUse(ce.fileTool(contract.ToolReadFile), map[string]any{"path": "GEMINI.md"})
			case n == 2:
				return toolUse(ce.fileTool(contract.ToolReadFile), map[string]any{"path": "AGENTS.md"})
			case n < 3+len(own):
				return toolUse(own[n-3].tool, own[n-3].args())
			case n == 3+len(own):
				return toolUse(ce.gateTool("create_issue"), map[string]any{"repo": testRepo, "title": "Track the bug", "body": "details"})
			case n == 4+len(own):
				if strings.Contains(lastToolResult(t, req).Content, "here-only") {
					return toolUse(ce.gateTool("add_comment"), map[string]any{"repo": testRepo, "number": testNumber, "body": "It fails because of CRLF."})
				}
				return fakemodel.Text("the denial did not arrive")
			}
			return fakemodel.Text("Done: I commented.")
		})
		f = newFixture(t, "@helperbot !cfg here-only\nwhy does the build fail? what does the README say? open an issue for it")
		canaryDir, canaries := hostileTarget(t, f)
		eng, fake := ce.start(t, f, script)
		url = fake.URL()
		f.env["MR_TIMEOUT"] = hangguard.EngineTimeout
		f.env["MR_MAX_TURNS"] = "30"

		out, err := f.run(t, eng)
		require.NoError(t, err, "a denial is not a failure")
		assert.Equal(t, contract.StatusCompleted, out.Status)
		assert.True(t, out.Deliverable)
		assert.Empty(t, fake.Problems())
		agent := fake.AgentRequests()
		require.Len(t, agent, 6+len(own), "the model traffic went to the configured API")
		names := agent[0].ToolNames()
		for _, tool := range contract.ReadFileTools {
			assert.Contains(t, names, ce.fileTool(tool))
		}
		for _, tool := range contract.WriteFileTools {
			assert.NotContains(t, names, ce.fileTool(tool), "no write tool by default")
		}
		read := lastToolResult(t, agent[1])
		assert.False(t, read.IsError, read.Content)
		assert.Contains(t, read.Content, "# hostile")
		for i := 2; i <= 3; i++ {
			r := lastToolResult(t, agent[i])
			assert.False(t, r.IsError, "reading the checkout is allowed: %s", r.Content)
			assert.Contains(t, r.Content, hostile.CLAUDEMDMarker, "the instruction file is readable as data")
		}
		// the Gemini CLI's own read tools, offered for the copy of the
		// thread's data, reach nothing outside that workspace: not /etc,
		// not the checkout (only the runner's file tools do), not the
		// CLI's own settings under HOME
		for i, tr := range own {
			res := lastToolResult(t, agent[4+i])
			assert.Contains(t, res.Content, "outside", "%s %v must be refused: %.300s", tr.tool, tr.args(), res.Content)
			assert.NotContains(t, res.Content, "root:x:0:0")
			assert.NotContains(t, res.Content, "# hostile")
			assert.NotContains(t, res.Content, `"workdir"`, "no gate config content")
		}

		// nothing of the hostile repository instructed, configured or ran
		for _, r := range fake.Requests() {
			assert.NotContains(t, r.System, hostile.CLAUDEMDMarker, "request %d: the repository's instructions reached the system prompt", r.Seq)
			assert.NotContains(t, string(r.Body), "stolen")
			assert.Equal(t, claudetest.DummyAPIKey, apiKey(r), "the key is the runner's, not the repository's .env")
		}
		assert.NotContains(t, string(agent[0].Body), hostile.CLAUDEMDMarker, "nothing of the repository is loaded before the model reads it")
		assert.Empty(t, hostile.Traces(canaryDir, canaries), "the hostile repository ran or wrote something")
		assert.Eventually(t, func() bool { return len(liveProcessesMentioning(f.runDir())) == 0 }, 10*time.Second, 20*time.Millisecond)

		// the denial reached the model, which adapted
		assert.Contains(t, agent[0].UserText(), "why does the build fail?")
		assert.Contains(t, agent[0].ToolNames(), ce.gateTool("add_comment"))
		assert.Contains(t, lastToolResult(t, agent[4+len(own)]).Content, "here-only allows comments and reviews only on octo/hello#42", "the denial reaches the model")
		assert.Contains(t, lastToolResult(t, agent[5+len(own)]).Content, "queued", "the allowed comment is queued")

		entries, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
		require.NoError(t, err)
		require.Len(t, entries, 1, "only the adapted comment is queued")
		assert.Equal(t, policy.KindComment, entries[0].Kind)
		assert.Equal(t, "It fails because of CRLF.", entries[0].Body)

		o := f.requireRecord(t)
		assert.Equal(t, contract.StatusCompleted, o.Status)
		evs := f.events(t)
		ts := types(evs)
		for _, want := range []string{"run.created", "config.loaded", "prompt.rendered", "run.started", "skill.indexed",
			"tool.started", "tool.completed", "policy.allowed", "deliverable.check.completed", contract.EventAgentCompleted} {
			assert.Contains(t, ts, want)
		}
		require.Len(t, eventsOf(evs, "policy.denied"), 1)
		assert.Len(t, eventsOf(evs, "policy.allowed"), 1)
		transcript, err := os.ReadFile(filepath.Join(f.runDir(), "transcript.md"))
		require.NoError(t, err)
		assert.Contains(t, string(transcript), ce.gateTool("add_comment"))
		tools, err := os.ReadFile(filepath.Join(f.runDir(), "logs", "tools.jsonl"))
		require.NoError(t, err)
		assert.Contains(t, string(tools), ce.gateTool("add_comment"))

		// no credential in the CLI's environment
		require.NotEmpty(t, seen, "the engine's processes were found")
		for _, env := range seen {
			for _, kv := range env {
				name, value, _ := strings.Cut(kv, "=")
				assert.NotContains(t, []string{"GITHUB_TOKEN", "BOT_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RUNTIME_TOKEN"}, name)
				assert.NotContains(t, value, f.env["GITHUB_TOKEN"])
				assert.NotContains(t, value, f.env["BOT_TOKEN"])
			}
		}

		// the session's [User] is the task, never the rendered prompt the CLI may echo
		users := 0
		for _, turn := range f.session(t).Turns {
			if turn.Role == "user" {
				b, err := json.Marshal(turn.Blocks)
				require.NoError(t, err)
				assert.NotContains(t, string(b), "# How to write", "the rendered prompt reached the session")
				users++
			}
		}
		assert.Positive(t, users)
	})
}

// The pull-request tool set (Edit, Write) with Codex and Gemini on the
// hostile repository — reads and writes outside the checkout refused, the
// edit becoming a pull request, nothing of the repository running — is
// internal/testrig/e2e's TestFlowEnginePR: the same engine configuration, whose
// one CLI start per engine also carries the whole flow.

// probe is one tool call a probing model makes (tool named as the engine
// names it; args evaluated when the call is made).
type probe struct {
	tool string
	args func() map[string]any
}

// TestEngineRefusesUnkeepableSettings: a setting the engine cannot keep —
// a cost budget (the CLIs report tokens, not cost) or a shell — fails the
// run before the CLI starts (there is none here), with the setting named:
// nothing is silently ignored.
func TestEngineRefusesUnkeepableSettings(t *testing.T) {
	for _, eng := range []engine.Engine{codex.New("/nonexistent/codex"), gemini.New("/nonexistent/gemini")} {
		for _, tc := range []struct{ key, value, want string }{
			{"MR_MAX_BUDGET_USD", "0.25", "MR_MAX_BUDGET_USD=0.25"},
			{"MR_ALLOWED_TOOLS", "Edit,Bash", "MR_ALLOWED_TOOLS Bash"},
			{"MR_ALLOWED_TOOLS", "WebFetch", "MR_ALLOWED_TOOLS WebFetch"},
			{"MR_ALLOWED_TOOLS", "Write(/etc/**)", "MR_ALLOWED_TOOLS Write(/etc/**)"},
		} {
			t.Run(eng.Name()+"/"+tc.value, func(t *testing.T) {
				f := newFixture(t, "@helperbot hello")
				f.env[tc.key] = tc.value
				out, err := f.run(t, eng)
				var re *RunError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, contract.StatusFailed, out.Status)
				assert.Contains(t, out.Error, tc.want)
				assert.NotContains(t, out.Error, "/nonexistent", "refused before the CLI was started")
				f.requireRecord(t)
			})
		}
	}
}

// geminiOwnReadProbes are the Gemini CLI's own read_file tried on /etc,
// on the checkout and on the gate's config (TestEngineReadsCheckout).
func geminiOwnReadProbes(f func() *fixture) []probe {
	return []probe{
		{"read_file", func() map[string]any { return map[string]any{"file_path": "/etc/passwd"} }},
		{"read_file", func() map[string]any {
			return map[string]any{"file_path": filepath.Join(f().env["MR_WORKSPACE"], "README.md")}
		}},
		{"read_file", func() map[string]any { return map[string]any{"file_path": filepath.Join(f().runDir(), GateConfigFile)} }},
		{"read_file", func() map[string]any { return map[string]any{"file_path": "../../../etc/passwd"} }},
	}
}

// Codex's own apply_patch (offered to models like gpt-5.5 whatever the
// configuration says) changing nothing, even with the pull-request tool
// set, is TestEngineLoopStopped/codex: its first turn, in that
// configuration.
