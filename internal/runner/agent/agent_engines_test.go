package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/gemini"
	fakeopenai "github.com/mention-runner/mention-runner/internal/testrig/fakemodel/openai"
	"github.com/mention-runner/mention-runner/internal/testrig/hangguard"
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
			f.env["MR_TIMEOUT"] = hangguard.EngineTimeout
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
			f.env["MR_TIMEOUT"] = hangguard.EngineTimeout
			return gemini.New(bin), fake
		},
	},
}

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

// TestEngineLoopStopped: the model repeats the same call; the runner
// stops the engine at six. For Codex the same run (one CLI start: each
// costs seconds of CPU) shows that Codex's own apply_patch, which it
// offers to models like gpt-5.5 whatever the configuration says, changes
// nothing even with the pull-request tool set: not the checkout (edits go
// through the runner's file tools), nothing elsewhere. The patches come
// with the first call, in the same model message, so the loop is the
// same six calls; the loop does not depend on the model or the tool set.
func TestEngineLoopStopped(t *testing.T) {
	forEachCLIEngine(t, func(t *testing.T, ce cliEngine) {
		var f *fixture
		outside := filepath.Join(os.TempDir(), "mr-apply-patch-"+strings.ReplaceAll(t.Name(), "/", "_"))
		t.Cleanup(func() { os.Remove(outside) })
		var patches []fakemodel.Block
		patch := func(id, body string) fakemodel.Block {
			return fakemodel.ToolUseBlock(id, "apply_patch", map[string]any{"input": "*** Begin Patch\n" + body + "*** End Patch\n"})
		}
		script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
			noop := toolUse(ce.gateTool("noop"), map[string]any{"reason": "thinking"})
			if req.Turn() > 0 || ce.name != codex.Name {
				return noop
			}
			work := f.env["MR_WORKSPACE"]
			patches = []fakemodel.Block{
				patch("call_patch_update", "*** Update File: "+filepath.Join(work, "README.md")+"\n@@\n-# hello\n+# pwned\n"),
				patch("call_patch_add", "*** Add File: "+filepath.Join(work, "pwned.txt")+"\n+pwned\n"),
				patch("call_patch_outside", "*** Add File: "+outside+"\n+pwned\n"),
			}
			return fakemodel.Reply{Content: append(append([]fakemodel.Block{}, patches...), noop.Content...)}
		})
		f = newFixture(t, "@helperbot think hard")
		f.env["MR_MAX_TURNS"] = "30"
		eng, fake := ce.start(t, f, script)
		if ce.name == codex.Name {
			f.env["MR_MODEL"] = codex.DefaultModel // a model Codex offers apply_patch to
			f.env["MR_ALLOWED_TOOLS"] = "Edit,Write"
		}

		out, err := f.run(t, eng)
		var re *RunError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, contract.CauseLoop, out.Failure)
		require.NotNil(t, out.Loop)
		assert.Equal(t, 6, out.Loop.Count)
		assert.Equal(t, ce.gateTool("noop"), out.Loop.Tool)
		agent := fake.AgentRequests()
		assert.LessOrEqual(t, len(agent), 8, "the engine was stopped soon after the sixth call")
		// the CLI's own turn boundaries (TestEngineMaxTurns counts on them):
		// six messages with a noop each, and no more than the model gave
		assert.GreaterOrEqual(t, out.Turns, 6, "turns counted from the session")
		assert.LessOrEqual(t, out.Turns, len(agent))
		assert.Eventually(t, func() bool { return len(liveProcessesMentioning(f.runDir())) == 0 }, 10*time.Second, 20*time.Millisecond,
			"the CLI and the gate must be gone: %v", liveProcessesMentioning(f.runDir()))
		o := f.requireRecord(t)
		assert.Equal(t, contract.CauseLoop, o.Failure)
		require.Len(t, eventsOf(f.events(t), "loop.detected"), 1)

		if ce.name != codex.Name {
			return
		}
		require.Len(t, patches, 3)
		require.GreaterOrEqual(t, len(agent), 2)
		assert.Contains(t, agent[0].ToolNames(), "apply_patch", "the test exercises Codex's own patch tool")
		for _, p := range patches {
			res, ok := agent[1].ToolResult(p.ID)
			require.True(t, ok, "no result for apply_patch %s", p.ID)
			// Codex 0.169.0: "patch rejected: writing is blocked by read-only sandbox; …"
			assert.Contains(t, res.Content, "rejected", "apply_patch %s", p.ID)
		}
		b, err := os.ReadFile(filepath.Join(f.env["MR_WORKSPACE"], "README.md"))
		require.NoError(t, err)
		assert.Equal(t, "# hello\n", string(b), "the checkout is unchanged")
		assert.NoFileExists(t, filepath.Join(f.env["MR_WORKSPACE"], "pwned.txt"))
		assert.NoFileExists(t, outside)
	})
}

// TestEngineMaxTurns: the runner stops a CLI without a turn limit of its
// own (Codex, the Gemini CLI) when the model would start a turn past
// MR_MAX_TURNS, and the run fails as max_turns. The CLI here is a script
// that prints three turns of the CLI's own event stream (each a message
// and a gate call with its result; the shapes of the captures in
// engine/codex/testdata and engine/gemini/testdata) and then waits as a
// CLI waits for the model: no real CLI start is needed for the runner's
// side, and the real CLIs' turn boundaries are TestEngineLoopStopped's
// (its turn count).
func TestEngineMaxTurns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		turn   func(i int) []string // the event lines of turn i (from 1)
		head   []string
		engine func(bin string) engine.Engine
	}{
		{codex.Name,
			func(i int) []string {
				call := fmt.Sprintf(`"id":"item_%d_call","type":"mcp_tool_call","server":"gate","tool":"noop","arguments":{"reason":"step %d"}`, i, i)
				return []string{
					fmt.Sprintf(`{"type":"item.completed","item":{"id":"item_%d_msg","type":"agent_message","text":"step %d"}}`, i, i),
					`{"type":"item.started","item":{` + call + `,"result":null,"error":null,"status":"in_progress"}}`,
					`{"type":"item.completed","item":{` + call + `,"result":{"content":[{"type":"text","text":"ok"}],"structured_content":null},"error":null,"status":"completed"}}`,
				}
			},
			[]string{`{"type":"thread.started","thread_id":"01a204f5-1728-76e3-8d51-fec2f91db16a"}`, `{"type":"turn.started"}`},
			func(bin string) engine.Engine { return codex.New(bin) }},
		{gemini.Name,
			func(i int) []string {
				id := fmt.Sprintf("mcp_gate_noop__call_fake_%03d_1", i)
				return []string{
					fmt.Sprintf(`{"type":"message","timestamp":"2026-11-22T20:26:1%d.766Z","role":"assistant","content":"step %d","delta":true}`, i, i),
					fmt.Sprintf(`{"type":"tool_use","timestamp":"2026-11-22T20:26:1%d.814Z","tool_name":"mcp_gate_noop","tool_id":"%s","parameters":{"reason":"step %d"}}`, i, id, i),
					fmt.Sprintf(`{"type":"tool_result","timestamp":"2026-11-22T20:26:1%d.901Z","tool_id":"%s","status":"success","output":"ok"}`, i, id),
				}
			},
			[]string{`{"type":"init","timestamp":"2026-11-22T20:26:12.420Z","session_id":"f64e0dff-0a65-4cb4-b9cd-d743d2790374","model":"gemini-fake"}`,
				`{"type":"message","timestamp":"2026-11-22T20:26:12.422Z","role":"user","content":"go on forever"}`},
			func(bin string) engine.Engine { return gemini.New(bin) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			lines := append([]string{}, tc.head...)
			for i := 1; i <= 3; i++ {
				lines = append(lines, tc.turn(i)...)
			}
			stream := filepath.Join(dir, "stream.jsonl")
			require.NoError(t, os.WriteFile(stream, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			// not exec: the shell (its command line names the script) waits
			// with the sleep, so both must be stopped
			bin := filepath.Join(dir, "fake-"+tc.name)
			require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\ncat '"+stream+"'\nsleep 300\n"), 0o755))

			f := newFixture(t, "@helperbot go on forever")
			f.env["MR_ENGINE"] = tc.name
			f.env["MR_MAX_TURNS"] = "2"
			// a hang guard only: the script's run takes a second; a runner
			// that missed the limit would wait out the sleep
			f.env["MR_TIMEOUT"] = "60s"
			f.env["OPENAI_API_KEY"] = claudetest.DummyAPIKey
			f.env["GEMINI_API_KEY"] = claudetest.DummyAPIKey
			out, err := f.run(t, tc.engine(bin))
			var re *RunError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, contract.CauseMaxTurns, out.Failure, out.Error)
			assert.Contains(t, out.Error, "MR_MAX_TURNS=2")
			assert.Contains(t, out.Error, "after 2 turns")
			assert.Equal(t, 2, out.Turns)
			assert.Eventually(t, func() bool { return len(liveProcessesMentioning(bin)) == 0 }, 10*time.Second, 20*time.Millisecond,
				"the CLI must be gone: %v", liveProcessesMentioning(bin))
			o := f.requireRecord(t)
			assert.Equal(t, contract.CauseMaxTurns, o.Failure)
			assert.Len(t, eventsOf(f.events(t), contract.EventAgentFailed), 1)
		})
	}
}

// TestCodexSearchTurns: with its default model Codex reaches our tools
// through tool_search, and reports no exec event for a search; a model
// that only searches must still be stopped at MR_MAX_TURNS (before the
// engine read Codex's rollout it ran all nine searches and "completed" in
// one turn). Every search is in the record as a tool_search call with its
// query, its result naming the tools found.
func TestCodexSearchTurns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a real engine CLI")
	}
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		if req.Turn() >= 9 { // a bound: a runner that missed the limit ends here
			return fakemodel.Text("done")
		}
		return toolUse(codex.SearchTool, map[string]any{"query": fmt.Sprintf("noop gate %d", req.Turn()), "limit": 8})
	})
	f := newFixture(t, "@helperbot search forever")
	eng, fake := cliEngines[0].start(t, f, script)
	f.env["MR_MODEL"] = codex.DefaultModel // the model Codex defers our tools for
	f.env["MR_MAX_TURNS"] = "3"

	out, err := f.run(t, eng)
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, contract.CauseMaxTurns, out.Failure, out.Error)
	assert.Contains(t, out.Error, "MR_MAX_TURNS=3")
	assert.Equal(t, 3, out.Turns)
	// how soon after the third response Codex is stopped depends on the
	// rollout's polling (rolloutPoll) and the machine's load, so it is
	// logged, not asserted: the outcome is max_turns even when Codex has
	// answered its last request before the tail has read the searches
	agent := fake.AgentRequests()
	t.Logf("%d model requests", len(agent))
	require.GreaterOrEqual(t, len(agent), 3)
	assert.Contains(t, agent[0].ToolNames(), codex.SearchTool, "the model really searches")
	o := f.requireRecord(t)
	assert.Equal(t, contract.CauseMaxTurns, o.Failure)

	evs := f.events(t)
	var queries []string
	for _, e := range eventsOf(evs, contract.EventToolStarted) {
		var d struct {
			Name      string
			Arguments struct{ Query string }
		}
		require.NoError(t, json.Unmarshal(e.Data, &d))
		assert.Equal(t, codex.SearchTool, d.Name)
		queries = append(queries, d.Arguments.Query)
	}
	assert.Equal(t, []string{"noop gate 0", "noop gate 1", "noop gate 2"}, queries[:min(3, len(queries))])
	done := eventsOf(evs, contract.EventToolCompleted)
	require.GreaterOrEqual(t, len(done), 3)
	var d struct {
		ResultExcerpt string `json:"result_excerpt"`
	}
	require.NoError(t, json.Unmarshal(done[0].Data, &d))
	assert.Contains(t, d.ResultExcerpt, "mcp__gate__noop", "the result names the tools found")
}

// TestCodexSearchLoop: the loop detector sees Codex's tool searches,
// which come from its rollout (Codex's exec stream has no event for
// them). The CLI is a script, as in TestEngineMaxTurns: it writes seven
// identical searches (call and output, the rollout's shapes) under the
// CODEX_HOME the engine gave it, prints the stream's start and waits as
// Codex waits for the model; the runner must stop it at the sixth.
func TestCodexSearchLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	for i := 1; i <= 7; i++ {
		lines = append(lines,
			fmt.Sprintf(`{"timestamp":"2026-11-23T22:01:00.411Z","type":"response_item","payload":{"type":"tool_search_call","call_id":"call_%d","status":"completed","execution":"client","arguments":{"limit":8,"query":"noop gate"}}}`, i),
			fmt.Sprintf(`{"timestamp":"2026-11-23T22:01:00.417Z","type":"response_item","payload":{"type":"tool_search_output","call_id":"call_%d","status":"completed","execution":"client","tools":[{"type":"namespace","name":"mcp__gate","tools":[{"type":"function","name":"noop"}]}]}}`, i))
	}
	rollout := filepath.Join(dir, "rollout.jsonl")
	require.NoError(t, os.WriteFile(rollout, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	stream := filepath.Join(dir, "stream.jsonl")
	require.NoError(t, os.WriteFile(stream, []byte(`{"type":"thread.started","thread_id":"01a20a6d-393b-7dd0-8706-838311f13284"}`+"\n"+`{"type":"turn.started"}`+"\n"), 0o644))
	bin := filepath.Join(dir, "fake-codex")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nd=\"$CODEX_HOME/sessions/2026/11/23\"\nmkdir -p \"$d\"\n"+
		"cp '"+rollout+"' \"$d/rollout-2026-11-23T22-00-59-01a20a6d-393b-7dd0-8706-838311f13284.jsonl\"\ncat '"+stream+"'\nsleep 300\n"), 0o755))

	f := newFixture(t, "@helperbot search forever")
	f.env["MR_ENGINE"] = codex.Name
	f.env["MR_MAX_TURNS"] = "30"
	f.env["MR_TIMEOUT"] = "60s" // a hang guard only: a runner blind to the searches waits out the sleep
	f.env["OPENAI_API_KEY"] = claudetest.DummyAPIKey
	out, err := f.run(t, codex.New(bin))
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, contract.CauseLoop, out.Failure, out.Error)
	require.NotNil(t, out.Loop)
	assert.Equal(t, 6, out.Loop.Count)
	assert.Equal(t, codex.SearchTool, out.Loop.Tool)
	assert.Eventually(t, func() bool { return len(liveProcessesMentioning(bin)) == 0 }, 10*time.Second, 20*time.Millisecond,
		"the CLI must be gone: %v", liveProcessesMentioning(bin))
	o := f.requireRecord(t)
	assert.Equal(t, contract.CauseLoop, o.Failure)
	require.Len(t, eventsOf(f.events(t), "loop.detected"), 1)
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

func apiKey(r fakemodel.Request) string {
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
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
