package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
	"github.com/mention-runner/mention-runner/internal/runner/config"
	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// scriptEngine is the claude engine running a shell script standing in
// for Claude Code, for failures the real one cannot be made to show.
func scriptEngine(t *testing.T, body string) *claude.Engine {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return claude.New(p)
}

const resultOK = `echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok"}'`

// TestEngineEnvHasNoToken runs the whole stage with a fake claude that
// dumps its environment: tokens set in the runner's environment (the
// process's and the getenv the stage reads) must not be there.
func TestEngineEnvHasNoToken(t *testing.T) {
	f := newFixture(t, "@helperbot hi")
	f.exe = "/bin/true"
	for _, k := range []string{"GITHUB_TOKEN", "BOT_TOKEN", "ACTIONS_RUNTIME_TOKEN"} {
		t.Setenv(k, f.env[k]+"x")
	}
	f.env["GH_TOKEN"] = "gho_" + strings.Repeat("g", 36)
	f.env["ANTHROPIC_API_KEY"] = "dummy-key"
	f.env["OPENAI_API_KEY"], f.env["GEMINI_API_KEY"] = "other-engine-key", "other-engine-key"
	// the workspace sits in a git repository: the engine's git must not find it
	_, err := gitexec.Isolated(f.dir, "", time.Minute).Run(context.Background(), "init", "-q")
	require.NoError(t, err)
	dump := filepath.Join(t.TempDir(), "env.txt")
	out, err := f.run(t, scriptEngine(t, `env > "`+dump+`"; pwd >> "`+dump+`"; `+
		`git rev-parse --git-dir >> "`+dump+`" 2>&1 || echo "no repository found" >> "`+dump+`"; `+resultOK))
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, out.Status)
	b, err := os.ReadFile(dump)
	require.NoError(t, err)
	got := string(b)
	for _, bad := range []string{"GITHUB_", "BOT_TOKEN", "GH_TOKEN", "ACTIONS_", "ghs_", "ghp_", "gho_", "MR_"} {
		assert.NotContains(t, got, bad)
	}
	assert.Contains(t, got, "ANTHROPIC_API_KEY=dummy-key")
	assert.NotContains(t, got, "other-engine-key", "only the selected engine's key")
	assert.Contains(t, got, "GIT_CEILING_DIRECTORIES="+f.dir+"\n")
	assert.Contains(t, got, "GIT_DISCOVERY_ACROSS_FILESYSTEM=0\n")
	assert.Contains(t, got, "no repository found", "git in the workspace finds no parent repository")
	assert.NotContains(t, got, f.dir+"/.git")
	assert.Contains(t, got, "HOME=")
	assert.NotContains(t, got, "HOME="+os.Getenv("HOME")+"\n", "a fresh home, not the runner's")
	assert.Contains(t, got, filepath.Join(f.dir, "target"), "the engine runs in the checkout")
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, f *fixture)
		script   string
		failure  string
		contains []string
	}{
		{"turn limit", func(t *testing.T, f *fixture) { f.env["MR_MAX_TURNS"] = "2" },
			`echo '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3,"errors":["Reached maximum number of turns (2)"]}'; exit 1`, contract.CauseMaxTurns,
			[]string{"Reached maximum number of turns (2)\n(the runner's turn limit MR_MAX_TURNS=2 was reached: 2 turns used)"}},
		{"engine crashes", nil, `echo "Error: segfault in node" >&2; exit 3`, contract.CauseCrash,
			[]string{"exited with status 3", "segfault in node"}},
		{"engine error result", nil, `echo '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"boom"}'`, contract.CauseFailed,
			[]string{"error_during_execution", "boom"}},
		{"engine ends without result", nil, `echo '{"type":"system","subtype":"init"}'`, contract.CauseCrash,
			[]string{"without reporting a result"}},
		{"budget reached", func(t *testing.T, f *fixture) { f.env["MR_MAX_BUDGET_USD"] = "0.5" },
			`echo '{"type":"result","subtype":"error_max_budget_usd","is_error":true,"result":"","total_cost_usd":0.51}'; exit 1`, contract.CauseBudget,
			[]string{"error_max_budget_usd", "MR_MAX_BUDGET_USD=0.5 was reached: $0.5100 spent"}},
		{"timeout", func(t *testing.T, f *fixture) { f.env["MR_TIMEOUT"] = "1s" }, `exec sleep 60`, contract.CauseTimeout,
			[]string{"wall-clock limit of 1s (MR_TIMEOUT)"}},
		{"loop through the script engine", func(t *testing.T, f *fixture) { f.env["MR_LOOP_THRESHOLD"] = "3" }, strings.Repeat(
			`echo '{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t'$RANDOM'","name":"Grep","input":{"pattern":"x"}}]}}'`+"\n", 5) + `exec sleep 60`,
			contract.CauseLoop, []string{"3 identical consecutive calls of Grep"}},
		{"context changed", func(t *testing.T, f *fixture) {
			require.NoError(t, os.WriteFile(f.env["MR_CONTEXT_FILE"], append(f.context, ' '), 0o644))
		}, resultOK, contract.CauseFailed, []string{"does not match the SHA-256 from assemble"}},
		{"no checksum", func(t *testing.T, f *fixture) { f.env["MR_CONTEXT_SHA256"] = "" }, resultOK, contract.CauseFailed,
			[]string{"MR_CONTEXT_SHA256"}},
		{"no mention", func(t *testing.T, f *fixture) { f.env["BOT_LOGIN"] = "otherbot" }, resultOK, contract.CauseFailed,
			[]string{"does not mention @otherbot"}},
		{"broken blocklist snapshot", func(t *testing.T, f *fixture) {
			p := filepath.Join(filepath.Dir(f.env["MR_CONTEXT_FILE"]), contract.BlocklistSnapshotFile)
			require.NoError(t, os.WriteFile(p, []byte(`{"entries":[{"pattern":"nope"}]}`), 0o644))
		}, resultOK, contract.CauseFailed, []string{`pattern "nope"`}},
		{"missing system prompt", func(t *testing.T, f *fixture) { f.env["MR_SYSTEM_PROMPT_FILE"] = "/nonexistent/prompt.md" }, resultOK,
			contract.CauseFailed, []string{"MR_SYSTEM_PROMPT_FILE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "@helperbot hi")
			f.exe = "/bin/true"
			if tc.setup != nil {
				tc.setup(t, f)
			}
			out, err := f.run(t, scriptEngine(t, tc.script))
			var re *RunError
			require.ErrorAs(t, err, &re)
			require.NotNil(t, out)
			assert.Equal(t, contract.StatusFailed, out.Status)
			assert.Equal(t, tc.failure, out.Failure)
			if tc.failure == contract.CauseMaxTurns {
				assert.Equal(t, 2, out.Turns, "the record counts the turns the limit allowed, not the refused one")
			}
			for _, c := range tc.contains {
				assert.Contains(t, out.Error, c)
			}
			o := f.requireRecord(t)
			assert.Equal(t, out.Error, o.Error)
			evs := f.events(t)
			assert.Equal(t, "agent.failed", evs[len(evs)-1].Type)
			assert.NotEmpty(t, eventsOf(evs, "error"), "the failure is in errors.jsonl too")
			// core-types: stopped by the runner is interrupted, anything else failed
			want := session.StatusFailed
			if tc.failure == contract.CauseLoop || tc.failure == contract.CauseTimeout {
				want = session.StatusInterrupted
			}
			assert.Equal(t, want, f.session(t).Status)
			for _, turn := range f.session(t).Turns {
				for _, c := range turn.ToolCalls {
					assert.NotEqual(t, session.ToolPending, c.Status, "the run is over: %s", c.ID)
				}
			}
		})
	}
}

// TestUserTurnIsTheTask: [User] is the trigger's task (after the mention
// and flags, sanitized, mentions neutralised), never the rendered prompt;
// ids carry their core-types prefixes.
func TestUserTurnIsTheTask(t *testing.T) {
	f := newFixture(t, "@helperbot !cfg comment-limit=1\nplease ask @carol<!-- hidden --> about the build")
	f.env["MR_ENGINE"] = "replay"
	p := filepath.Join(t.TempDir(), "script.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(`{"tool":"add_comment","args":{"repo":"octo/hello","number":42,"body":"hi"}}`+"\n"+`{"text":"Done."}`), 0o644))
	f.env["MR_REPLAY_SCRIPT"] = p
	_, err := f.run(t, nil)
	require.NoError(t, err)
	s := f.session(t)
	assert.True(t, strings.HasPrefix(s.ID, "sess_"), s.ID)
	require.NotEmpty(t, s.Turns)
	first := s.Turns[0]
	assert.Equal(t, "user", first.Role)
	require.Len(t, first.Blocks, 1)
	assert.Equal(t, "please ask @\u2060carol about the build", first.Blocks[0].Content)
	assert.Equal(t, "please ask @\u2060carol about the build", s.Intent)
	for _, turn := range s.Turns {
		assert.True(t, strings.HasPrefix(turn.ID, "entry_"), turn.ID)
		assert.True(t, strings.HasPrefix(turn.TurnID, "turn_"), turn.TurnID)
		if turn.Role == "user" && turn.Sequence > 0 {
			t.Errorf("a second user turn: %+v", turn)
		}
		for _, c := range turn.ToolCalls {
			assert.Equal(t, "Comment on an issue or pull request", c.DisplayName, "display_name from the gate tool's title")
		}
	}
	evs := f.events(t)
	assert.Equal(t, s.ID, evs[0].SessionID)
}

// TestDeniedOnlyIsNoDeliverable: a run whose only write is refused by
// !cfg completes (a denial is not a failure) with no deliverable: the
// denial is an info event, deliverable.missing is recorded and nothing is
// queued. The replay engine goes through the real gate; how the refusal
// reaches a real model is internal/testrig/e2e TestFlowClaude's and
// TestEngineReadsCheckout's.
func TestDeniedOnlyIsNoDeliverable(t *testing.T) {
	f := newFixture(t, "@helperbot !cfg here-only\nopen an issue for this")
	f.env["MR_ENGINE"] = "replay"
	p := filepath.Join(t.TempDir(), "script.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(`{"tool":"create_issue","args":{"repo":"octo/hello","title":"Track the bug","body":"details"}}`+"\n"+
		`{"text":"I could not open an issue."}`), 0o644))
	f.env["MR_REPLAY_SCRIPT"] = p

	out, err := f.run(t, nil)
	require.NoError(t, err, "a denial is not a failure")
	assert.Equal(t, contract.StatusCompleted, out.Status)
	assert.False(t, out.Deliverable)
	assert.Equal(t, 0, out.Outputs)

	f.requireRecord(t)
	evs := f.events(t)
	denied := eventsOf(evs, "policy.denied")
	require.Len(t, denied, 1)
	assert.Equal(t, "info", denied[0].Severity, "a denial is not an error")
	assert.Contains(t, denied[0].Summary+string(denied[0].Data), "here-only")
	assert.Empty(t, eventsOf(evs, "policy.allowed"))
	assert.Len(t, eventsOf(evs, "deliverable.missing"), 1)
	assert.Empty(t, eventsOf(evs, "error"))
	_, err = os.Stat(filepath.Join(f.runDir(), contract.OutputsFile))
	assert.True(t, os.IsNotExist(err) || fileEmpty(t, filepath.Join(f.runDir(), contract.OutputsFile)))
}

func TestReplayEngine(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		failure string
		outputs int
		err     string
	}{
		{"comment", `{"text":"Looking."}` + "\n" + `{"tool":"add_comment","args":{"repo":"octo/hello","number":42,"body":"hi"}}` + "\n" + `{"text":"Done."}`, "", 1, ""},
		// a noop is a deliverable (the run completes without a write)
		{"noop", `{"tool":"noop","args":{"reason":"nothing to change"}}` + "\n" + `{"text":"Done."}`, "", 1, ""},
		{"crash", `{"text":"Looking."}` + "\n" + `{"crash":"out of memory"}`, contract.CauseCrash, 0, "out of memory"},
		{"no script", "", contract.CauseFailed, 0, "MR_REPLAY_SCRIPT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "@helperbot hi")
			f.env["MR_ENGINE"] = "replay"
			if tc.script != "" {
				p := filepath.Join(t.TempDir(), "script.jsonl")
				require.NoError(t, os.WriteFile(p, []byte(tc.script), 0o644))
				f.env["MR_REPLAY_SCRIPT"] = p
			}
			out, err := f.run(t, nil)
			f.requireRecord(t)
			assert.Equal(t, "replay", out.Engine)
			assert.Equal(t, tc.failure, out.Failure)
			assert.Equal(t, tc.outputs, out.Outputs)
			assert.Equal(t, tc.outputs > 0, out.Deliverable)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Len(t, eventsOf(f.events(t), "policy.allowed"), tc.outputs)
				return
			}
			require.Error(t, err)
			assert.Contains(t, out.Error, tc.err)
		})
	}
}

// TestPrepared checks what the stage hands the engine and the gate.
func TestPrepared(t *testing.T) {
	f := newFixture(t, "@helperbot !cfg comment-limit=1\nsummarise the thread")
	f.exe = "/bin/true"
	sys := filepath.Join(t.TempDir(), "system.md")
	require.NoError(t, os.WriteFile(sys, []byte("Operator rules: be kind."), 0o644))
	f.env["MR_SYSTEM_PROMPT_FILE"] = sys
	snap := filepath.Join(filepath.Dir(f.env["MR_CONTEXT_FILE"]), contract.BlocklistSnapshotFile)
	require.NoError(t, os.WriteFile(snap, []byte(`{"entries":[{"pattern":"evil/*","by":"evil","at":"2026-01-01T00:00:00Z","source":""}]}`), 0o644))
	stdin := filepath.Join(t.TempDir(), "stdin.txt")
	_, err := f.run(t, scriptEngine(t, `cat > "`+stdin+`"; `+resultOK))
	require.NoError(t, err)

	got, err := os.ReadFile(stdin)
	require.NoError(t, err)
	p := string(got)
	assert.True(t, strings.HasPrefix(p, "Operator rules: be kind.\n\n---\n\n"), p)
	assert.Contains(t, p, "```text\nsummarise the thread\n```")
	assert.Contains(t, p, "At most 1 comment may be written")
	assert.Contains(t, p, "opted out")
	assert.Contains(t, p, filepath.Join(f.runDir(), AgentContextFile))
	saved, err := os.ReadFile(filepath.Join(f.runDir(), PromptFile))
	require.NoError(t, err)
	assert.Equal(t, p, string(saved))

	gc, err := gate.LoadConfig(filepath.Join(f.runDir(), GateConfigFile))
	require.NoError(t, err)
	assert.Equal(t, gate.Thread{Repo: testRepo, Number: testNumber}, gc.Here)
	// the raw inputs publish uses, not a digested policy
	assert.Equal(t, "comment-limit=1", gc.Flags)
	require.NotNil(t, gc.Ceilings)
	cfg, err := config.Load(f.getenv)
	require.NoError(t, err)
	assert.Equal(t, cfg.Ceilings(), *gc.Ceilings)
	assert.Equal(t, "octo/control", gc.Ceilings.ControlRepo)
	require.NotNil(t, gc.Blocklist)
	require.Len(t, gc.Blocklist.Entries, 1)
	assert.Equal(t, "evil/*", gc.Blocklist.Entries[0].Pattern)
	assert.Equal(t, "evil", gc.Blocklist.Entries[0].By)
	// no fetched code (MR_TARGET_DIR): the workspace is plain files, no pull requests
	assert.Empty(t, gc.DefaultBase)
	assert.Empty(t, gc.WorkDir)
	assert.Empty(t, gc.StartCommit)

	clean, err := os.ReadFile(filepath.Join(f.runDir(), AgentContextFile))
	require.NoError(t, err)
	assert.NotContains(t, string(clean), "hidden")
	assert.NotContains(t, string(clean), "posted after")

	// the timeline says which files the stage read and wrote
	evs := f.events(t)
	require.Len(t, eventsOf(evs, "file.read"), 1)
	assert.Contains(t, string(eventsOf(evs, "file.read")[0].Data), f.env["MR_CONTEXT_SHA256"])
	var written []string
	for _, e := range eventsOf(evs, "file.written") {
		var d struct{ Path string }
		require.NoError(t, json.Unmarshal(e.Data, &d))
		written = append(written, d.Path)
	}
	assert.Equal(t, []string{AgentContextFile, PromptFile}, written)
}

// The engine's file-reading tool calls show in the timeline as file.read;
// other tools do not.
func TestFileReadEventsFromToolCalls(t *testing.T) {
	dir := t.TempDir()
	rec, err := record.Open(dir, record.Meta{RunID: "r", SessionID: "s", TaskID: "t"}, nil)
	require.NoError(t, err)
	r := &run{rec: rec}
	r.emitFileRead(session.Event{Kind: session.EventToolUse, ToolCallID: "c1", ToolName: "Read", Input: json.RawMessage(`{"file_path":"/w/README.md"}`)})
	r.emitFileRead(session.Event{Kind: session.EventToolUse, ToolCallID: "c2", ToolName: "Grep", Input: json.RawMessage(`{"pattern":"TODO"}`)})
	r.emitFileRead(session.Event{Kind: session.EventToolUse, ToolCallID: "c3", ToolName: "mcp__gate__noop", Input: json.RawMessage(`{}`)})
	r.emitFileRead(session.Event{Kind: session.EventToolUse, ToolCallID: "c4", ToolName: "Read", Input: json.RawMessage(`not json`)})
	require.NoError(t, rec.Close())
	evs, err := record.ReadEvents(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	reads := eventsOf(evs, "file.read")
	require.Len(t, reads, 2)
	assert.Equal(t, "Read /w/README.md", reads[0].Summary)
	assert.Equal(t, "c1", reads[0].CorrelationID)
	assert.Equal(t, "Grep TODO", reads[1].Summary)
}

// A context file whose sha differs is refused and says so in the timeline.
func TestContextMismatchRecorded(t *testing.T) {
	f := newFixture(t, "@helperbot hi")
	f.env["MR_CONTEXT_SHA256"] = strings.Repeat("0", 64)
	f.exe = "/bin/true"
	_, err := f.run(t, scriptEngine(t, resultOK))
	require.Error(t, err)
	rej := eventsOf(f.events(t), "file.rejected")
	require.Len(t, rej, 1)
	assert.Contains(t, rej[0].Summary, "context file refused")
	assert.Empty(t, eventsOf(f.events(t), "file.read"))
}

func TestRunID(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    string
		wantErr bool
	}{
		{map[string]string{"GITHUB_RUN_ID": "123", "GITHUB_RUN_ATTEMPT": "2"}, "123-2", false},
		{map[string]string{"GITHUB_RUN_ID": "123"}, "123-1", false},
		{map[string]string{"GITHUB_RUN_ID": "../x"}, "", true},
		{map[string]string{"GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "a/b"}, "", true},
	}
	for _, tc := range tests {
		got, err := RunID(func(k string) string { return tc.env[k] })
		if tc.wantErr {
			assert.Error(t, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	local, err := RunID(func(string) string { return "" })
	require.NoError(t, err)
	assert.Regexp(t, `^local-[0-9a-f]{12}$`, local)
}

func TestGateTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gate.jsonl")
	g := &gateTail{path: p}
	recs, err := g.next()
	require.NoError(t, err)
	assert.Empty(t, recs, "no log yet")

	write := func(s string) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(s)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	write(`{"tool":"noop","decision":"allowed","reason":"a"}` + "\n" + `{"tool":"add_comment","decis`)
	recs, err = g.next()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "noop", recs[0].Tool)

	write(`ion":"denied","reason":"b"}` + "\nnot json\n")
	recs, err = g.next()
	require.Len(t, recs, 1)
	assert.Equal(t, "denied", recs[0].Decision)
	require.ErrorContains(t, err, "line 3")

	write(`{"tool":"x"`)
	recs, err = g.next()
	require.NoError(t, err)
	assert.Empty(t, recs)
	assert.Equal(t, `{"tool":"x"`, string(g.rest()))
}

func TestLoadContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(p, []byte(`{}`), 0o644))
	const sum = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	b, err := LoadContext(p, strings.ToUpper(sum))
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
	_, err = LoadContext(p, strings.Repeat("0", 64))
	require.ErrorIs(t, err, ErrContextMismatch)
	_, err = LoadContext(p, "")
	require.ErrorIs(t, err, ErrNoContextSHA)
	_, err = LoadContext(p+".missing", sum)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzGateTail: reading the log in two pieces, split anywhere, yields the
// same records as reading it whole, and never panics.
func FuzzGateTail(f *testing.F) {
	f.Add([]byte(`{"tool":"noop","decision":"allowed","reason":"a"}`+"\n"+`{"tool":"x","decision":"denied"}`+"\n"), 10)
	f.Add([]byte("garbage\n\n{\"tool\":\"y\"}"), 3)
	f.Add([]byte(""), 0)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		if split < 0 || split > len(data) {
			return
		}
		dir := t.TempDir()
		whole := filepath.Join(dir, "whole.jsonl")
		require.NoError(t, os.WriteFile(whole, data, 0o644))
		want, _ := (&gateTail{path: whole}).next()

		parts := filepath.Join(dir, "parts.jsonl")
		require.NoError(t, os.WriteFile(parts, data[:split], 0o644))
		g := &gateTail{path: parts}
		got, _ := g.next()
		fh, err := os.OpenFile(parts, os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = fh.Write(data[split:])
		require.NoError(t, err)
		require.NoError(t, fh.Close())
		more, _ := g.next()
		got = append(got, more...)
		require.Equal(t, len(want), len(got))
		for i := range want {
			require.Equal(t, want[i].Tool, got[i].Tool)
			require.Equal(t, want[i].Decision, got[i].Decision)
		}
	})
}
