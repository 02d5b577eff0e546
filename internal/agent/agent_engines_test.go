package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/engine"
	"github.com/mention-runner/mention-runner/internal/engine/codex"
	"github.com/mention-runner/mention-runner/internal/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/fakemodel/gemini"
	fakeopenai "github.com/mention-runner/mention-runner/internal/fakemodel/openai"
	"github.com/mention-runner/mention-runner/internal/hostile"
	"github.com/mention-runner/mention-runner/internal/outputs"
	"github.com/mention-runner/mention-runner/internal/policy"
)

// cliEngine is one of the engines run as their real CLI against a fake
// provider API on loopback. The scenarios below run for each of them.
type cliEngine struct {
	name string
	// gateTool is the engine's name for a gate tool ("add_comment" →
	// "mcp__gate__add_comment"); fileTool likewise for the runner's
	// checkout file tools ("read_file" → "mcp__files__read_file").
	gateTool, fileTool func(string) string
	// start builds the engine and its fake API and points f at them.
	start func(t *testing.T, f *fixture, script fakemodel.Script) (engine.Engine, fakeAPI)
}

// fakeAPI is what the scenarios read from a fake provider.
type fakeAPI interface {
	AgentRequests() []fakemodel.Request
	Requests() []fakemodel.Request
	Problems() []string
	URL() string
}

var cliEngines = []cliEngine{
	{
		name:     codex.Name,
		gateTool: func(t string) string { return "mcp__gate__" + t },
		fileTool: func(t string) string { return "mcp__files__" + t },
		start: func(t *testing.T, f *fixture, script fakemodel.Script) (engine.Engine, fakeAPI) {
			bin := claudetest.Codex.Binary(t)
			fake := fakeopenai.New(script).Start()
			t.Cleanup(fake.Close)
			f.env["OPENAI_BASE_URL"] = fake.URL() + "/v1"
			f.env["OPENAI_API_KEY"] = claudetest.DummyAPIKey
			f.env["MR_ENGINE"] = codex.Name // the engine env passes this engine's key only
			f.env["MR_MODEL"] = "gpt-fake"  // not in Codex's catalog: plain function tools
			f.env["MR_TIMEOUT"] = cliTimeout
			retries := 0
			return &codex.Engine{Bin: bin, Retries: &retries}, fake
		},
	},
	{
		name:     gemini.Name,
		gateTool: func(t string) string { return "mcp_gate_" + t },
		fileTool: func(t string) string { return gemini.ToolName(contract.FilesServer, t) },
		start: func(t *testing.T, f *fixture, script fakemodel.Script) (engine.Engine, fakeAPI) {
			bin := claudetest.GeminiCLI.Binary(t)
			fake := fakegemini.New(script).Start()
			t.Cleanup(fake.Close)
			f.env["GOOGLE_GEMINI_BASE_URL"] = fake.URL()
			f.env["GEMINI_API_KEY"] = claudetest.DummyAPIKey
			f.env["MR_ENGINE"] = gemini.Name // the engine env passes this engine's key only
			f.env["MR_MODEL"] = "gemini-fake"
			f.env["MR_TIMEOUT"] = cliTimeout
			return gemini.New(bin), fake
		},
	},
}

// cliTimeout is MR_TIMEOUT for the CLI engines, a hang guard only: the
// Gemini CLI alone takes seconds of CPU to start, and a minute or more on
// a loaded 2-core machine running two of these tests at once.
const cliTimeout = "300s"

func forEachCLIEngine(t *testing.T, fn func(t *testing.T, ce cliEngine)) {
	// Each scenario has its own fixture and fake API; the runs mostly
	// wait on their CLI, so they overlap (at most -parallel at once).
	t.Parallel()
	for _, ce := range cliEngines {
		t.Run(ce.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("runs a real engine CLI")
			}
			t.Parallel()
			fn(t, ce)
		})
	}
}

func lastToolResult(t *testing.T, req fakemodel.Request) fakemodel.Block {
	t.Helper()
	rs := req.ToolResults()
	require.NotEmpty(t, rs, "the request carries a tool result")
	return rs[len(rs)-1]
}

func TestEngineAllowedComment(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			if req.Turn() == 0 {
				return toolUse(ce.gateTool("add_comment"), map[string]any{"repo": testRepo, "number": testNumber, "body": "It fails because of CRLF."})
			}
			return fakemodel.Text("Done: I commented.")
		})
		f := newFixture(t, "@helperbot why does the build fail?")
		eng, fake := ce.start(t, f, script)

		out, err := f.run(t, eng)
		require.NoError(t, err)
		assert.Equal(t, contract.StatusCompleted, out.Status)
		assert.True(t, out.Deliverable)
		assert.Empty(t, fake.Problems())

		entries, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
		require.NoError(t, err)
		require.Len(t, entries, 1)
		assert.Equal(t, policy.KindComment, entries[0].Kind)
		assert.Equal(t, "It fails because of CRLF.", entries[0].Body)

		agent := fake.AgentRequests()
		require.Len(t, agent, 2)
		assert.Contains(t, agent[0].UserText(), "why does the build fail?")
		assert.Contains(t, agent[0].ToolNames(), ce.gateTool("add_comment"))
		assert.Contains(t, lastToolResult(t, agent[1]).Content, "queued")

		o := f.requireRecord(t)
		assert.Equal(t, contract.StatusCompleted, o.Status)
		ts := types(f.events(t))
		for _, want := range []string{"run.created", "config.loaded", "prompt.rendered", "run.started", "skill.indexed",
			"tool.started", "tool.completed", "policy.allowed", "deliverable.check.completed", contract.EventAgentCompleted} {
			assert.Contains(t, ts, want)
		}
		transcript, err := os.ReadFile(filepath.Join(f.runDir(), "transcript.md"))
		require.NoError(t, err)
		assert.Contains(t, string(transcript), ce.gateTool("add_comment"))
		tools, err := os.ReadFile(filepath.Join(f.runDir(), "logs", "tools.jsonl"))
		require.NoError(t, err)
		assert.Contains(t, string(tools), ce.gateTool("add_comment"))
	})
}

// TestEngineDenialAdapts: the gate refuses an issue under here-only; the
// model reads the refusal and comments instead.
func TestEngineDenialAdapts(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			switch req.Turn() {
			case 0:
				return toolUse(ce.gateTool("create_issue"), map[string]any{"repo": testRepo, "title": "Track the bug", "body": "details"})
			case 1:
				if strings.Contains(lastToolResult(t, req).Content, "here-only") {
					return toolUse(ce.gateTool("add_comment"), map[string]any{"repo": testRepo, "number": testNumber, "body": "I may not open issues here, so: the bug is CRLF."})
				}
				return fakemodel.Text("the denial did not arrive")
			}
			return fakemodel.Text("Commented instead.")
		})
		f := newFixture(t, "@helperbot !cfg here-only\nopen an issue for this")
		eng, fake := ce.start(t, f, script)

		out, err := f.run(t, eng)
		require.NoError(t, err, "a denial is not a failure")
		assert.Equal(t, contract.StatusCompleted, out.Status)
		agent := fake.AgentRequests()
		require.Len(t, agent, 3)
		assert.Contains(t, lastToolResult(t, agent[1]).Content, "here-only allows comments only on octo/hello#42")

		entries, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
		require.NoError(t, err)
		require.Len(t, entries, 1, "only the adapted comment is queued")
		assert.Equal(t, policy.KindComment, entries[0].Kind)
		f.requireRecord(t)
		evs := f.events(t)
		require.Len(t, eventsOf(evs, "policy.denied"), 1)
		assert.Len(t, eventsOf(evs, "policy.allowed"), 1)
	})
}

func TestEngineLoopStopped(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		script := fakemodel.Func(func(fakemodel.Request) fakemodel.Reply {
			return toolUse(ce.gateTool("noop"), map[string]any{"reason": "thinking"})
		})
		f := newFixture(t, "@helperbot think hard")
		f.env["MR_MAX_TURNS"] = "30"
		eng, fake := ce.start(t, f, script)

		out, err := f.run(t, eng)
		var re *RunError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, contract.CauseLoop, out.Failure)
		require.NotNil(t, out.Loop)
		assert.Equal(t, 6, out.Loop.Count)
		assert.Equal(t, ce.gateTool("noop"), out.Loop.Tool)
		assert.LessOrEqual(t, len(fake.AgentRequests()), 8, "the engine was stopped soon after the sixth call")
		assert.Eventually(t, func() bool { return len(liveProcessesMentioning(f.runDir())) == 0 }, 10*time.Second, 20*time.Millisecond,
			"the CLI and the gate must be gone: %v", liveProcessesMentioning(f.runDir()))
		o := f.requireRecord(t)
		assert.Equal(t, contract.CauseLoop, o.Failure)
		require.Len(t, eventsOf(f.events(t), "loop.detected"), 1)
	})
}

func TestEngineMaxTurns(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			return toolUse(ce.gateTool("noop"), map[string]any{"reason": "step " + string(rune('a'+req.Turn()))})
		})
		f := newFixture(t, "@helperbot go on forever")
		f.env["MR_MAX_TURNS"] = "2"
		eng, _ := ce.start(t, f, script)

		out, err := f.run(t, eng)
		var re *RunError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, contract.CauseMaxTurns, out.Failure)
		assert.Contains(t, out.Error, "MR_MAX_TURNS=2")
		o := f.requireRecord(t)
		assert.Equal(t, contract.CauseMaxTurns, o.Failure)
		assert.Len(t, eventsOf(f.events(t), contract.EventAgentFailed), 1)
	})
}

// TestEngineAPIFailure: the provider refuses the call; the run fails and
// keeps the CLI's own error text.
func TestEngineAPIFailure(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		script := fakemodel.Func(func(fakemodel.Request) fakemodel.Reply {
			return fakemodel.Fail(400, "invalid_request_error", "fakemodel: this model does not exist today")
		})
		f := newFixture(t, "@helperbot hello")
		eng, _ := ce.start(t, f, script)

		out, err := f.run(t, eng)
		f.requireEngineFailure(t, out, err, "this model does not exist today")
	})
}

// TestEngineHostileRepoRunsNothing: with the hostile repository of
// internal/hostile (which carries the Codex and Gemini project files too)
// as the checkout and the default (read-only) tools, the engine reads
// GEMINI.md and AGENTS.md as data through the file tools, loads none of
// the project files as configuration or instructions, starts nothing from
// them, and talks only to the configured API with the runner's key.
func TestEngineHostileRepoRunsNothing(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			switch req.Turn() {
			case 0:
				return toolUse(ce.fileTool(contract.ToolReadFile), map[string]any{"path": "GEMINI.md"})
			case 1:
				return toolUse(ce.fileTool(contract.ToolReadFile), map[string]any{"path": "AGENTS.md"})
			case 2:
				return toolUse(ce.gateTool("noop"), map[string]any{"reason": "nothing to do"})
			}
			return fakemodel.Text("Nothing to do.")
		})
		f := newFixture(t, "@helperbot look at the repository")
		canaryDir, canaries := hostileTarget(t, f)
		eng, fake := ce.start(t, f, script)
		f.env["MR_TIMEOUT"] = "3m"

		out, err := f.run(t, eng)
		require.NoError(t, err)
		assert.Equal(t, contract.StatusCompleted, out.Status)
		agent := fake.AgentRequests()
		require.Len(t, agent, 4, "the model traffic went to the configured API")
		for i := 1; i <= 2; i++ {
			r := lastToolResult(t, agent[i])
			assert.False(t, r.IsError, "reading the checkout is allowed: %s", r.Content)
			assert.Contains(t, r.Content, hostile.CLAUDEMDMarker, "the instruction file is readable as data")
		}
		for _, tool := range contract.WriteFileTools {
			assert.NotContains(t, agent[0].ToolNames(), ce.fileTool(tool), "no write tool by default")
		}
		for _, r := range fake.Requests() {
			assert.NotContains(t, r.System, hostile.CLAUDEMDMarker, "request %d: the repository's instructions reached the system prompt", r.Seq)
			assert.NotContains(t, string(r.Body), "stolen")
			assert.Equal(t, claudetest.DummyAPIKey, apiKey(r), "the key is the runner's, not the repository's .env")
		}
		assert.NotContains(t, string(agent[0].Body), hostile.CLAUDEMDMarker, "nothing of the repository is loaded before the model reads it")
		noCanaries(t, canaryDir, canaries)
		assert.Eventually(t, func() bool { return len(liveProcessesMentioning(f.runDir())) == 0 }, 10*time.Second, 20*time.Millisecond)
	})
}

func apiKey(r fakemodel.Request) string {
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// TestEngineEnvHasNoGitHubToken: the engine CLI's processes, seen from
// /proc while the model is being asked, hold none of the runner's GitHub
// or Actions credentials.
func TestEngineEnvHasNoGitHubToken(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		var seen [][]string
		var url string
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			if req.Turn() == 0 {
				seen = environsMentioning(url)
			}
			return fakemodel.Text("done")
		})
		f := newFixture(t, "@helperbot hello")
		eng, fake := ce.start(t, f, script)
		url = fake.URL()

		_, err := f.run(t, eng)
		require.NoError(t, err)
		require.NotEmpty(t, seen, "the engine's processes were found")
		for _, env := range seen {
			for _, kv := range env {
				name, value, _ := strings.Cut(kv, "=")
				assert.NotContains(t, []string{"GITHUB_TOKEN", "BOT_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RUNTIME_TOKEN"}, name)
				assert.NotContains(t, value, f.env["GITHUB_TOKEN"])
				assert.NotContains(t, value, f.env["BOT_TOKEN"])
			}
		}
	})
}

// environsMentioning returns the environments of live processes whose
// environment contains s.
func environsMentioning(s string) [][]string {
	var out [][]string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		out = append(out, strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
	}
	return out
}
