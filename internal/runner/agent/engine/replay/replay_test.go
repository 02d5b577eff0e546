package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/enginetest"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate/gatetest"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

func TestMain(m *testing.M) {
	gatetest.ServeIfAsked()
	os.Exit(m.Run())
}

// fixture is a run on o/r#5 whose gate is this test binary.
type fixture struct {
	spec   engine.Spec
	runDir string
}

func newFixture(t *testing.T, flags string, mod func(*gate.Config)) fixture {
	t.Helper()
	ceil := policy.DefaultCeilings()
	runDir := t.TempDir()
	cfg := gate.Config{RunDir: runDir, Bot: "bot", Here: gate.Thread{Repo: "o/r", Number: 5},
		Flags: flags, Ceilings: &ceil, JobID: "job"}
	if mod != nil {
		mod(&cfg)
	}
	path := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, cfg.WriteFile(path))
	return fixture{runDir: runDir, spec: engine.Spec{
		Prompt:      "Please say hello on o/r#5.",
		WorkDir:     cfg.WorkDir,
		RunDir:      runDir,
		GateCommand: gatetest.Command(path),
		Env:         append([]string{"PATH=" + os.Getenv("PATH")}, gatetest.Env...),
	}}
}

func script(t *testing.T, lines ...string) *Engine {
	t.Helper()
	steps, err := ParseScript(strings.NewReader(strings.Join(lines, "\n")))
	require.NoError(t, err)
	return FromSteps(steps)
}

func kinds(evs []session.Event) string {
	var k []string
	for _, e := range evs {
		k = append(k, string(e.Kind))
	}
	return strings.Join(k, " ")
}

func TestReplayAgainstRealGate(t *testing.T) {
	fx := newFixture(t, "here-only", nil)
	e := script(t,
		`{"text": "I'll reply on the thread."}`,
		`{"tool": "add_comment", "args": {"repo": "o/r", "number": 5, "body": "Hello!"}}`,
		`{"tool": "create_issue", "args": {"repo": "o/r", "title": "Follow-up", "body": "more"}}`,
		`{"text": "Done; I could not open an issue."}`,
	)
	evs, res, err := enginetest.Run(context.Background(), e, fx.spec)
	require.NoError(t, err)
	assert.Equal(t, "init text tool_use tool_result tool_use tool_result text result", kinds(evs), "the prompt is not echoed")

	init := evs[0].Init
	require.NotNil(t, init)
	assert.Equal(t, []session.MCPServer{{Name: "gate", Status: "connected"}}, init.MCPServers)
	assert.Subset(t, init.Tools, []string{"mcp__gate__add_comment", "mcp__gate__create_issue", "mcp__gate__create_pull_request", "mcp__gate__create_review", "mcp__gate__add_labels", "mcp__gate__remove_labels", "mcp__gate__noop"})

	use1, res1, use2, res2 := evs[2], evs[3], evs[4], evs[5]
	assert.Equal(t, "mcp__gate__add_comment", use1.ToolName)
	assert.JSONEq(t, `{"repo":"o/r","number":5,"body":"Hello!"}`, string(use1.Input))
	assert.Equal(t, use1.ToolCallID, res1.ToolCallID)
	assert.False(t, res1.IsError, res1.Output)
	assert.Contains(t, res1.Output, "queued (output #0)")
	assert.Equal(t, evs[1].MessageID, use1.MessageID, "text and its tool call are one turn")

	assert.Equal(t, "mcp__gate__create_issue", use2.ToolName)
	assert.True(t, res2.IsError)
	assert.Contains(t, res2.Output, "denied: here-only", "the denial reaches the model as a tool error")
	assert.NotEqual(t, use1.MessageID, use2.MessageID)

	require.NotNil(t, res)
	assert.Equal(t, "success", res.Subtype)
	assert.False(t, res.IsError)
	assert.Equal(t, 3, res.NumTurns)
	assert.Equal(t, "Done; I could not open an issue.", res.Text)
	assert.Same(t, res, evs[len(evs)-1].Result)

	es, err := outputs.ReadFile(filepath.Join(fx.runDir, contract.OutputsFile))
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, "Hello!", es[0].Body)
	recs, err := gate.ReadLog(filepath.Join(fx.runDir, contract.GateLogFile))
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, gate.DecisionDenied, recs[1].Decision)
	assert.Equal(t, policy.RuleHereOnly, recs[1].Rule)
	for _, ev := range evs {
		assert.False(t, ev.Time.IsZero())
	}
}

func TestReplayCrash(t *testing.T) {
	fx := newFixture(t, "", nil)
	e := script(t, `{"text": "working"}`, `{"crash": "segfault in the model"}`, `{"text": "never"}`)
	evs, res, err := enginetest.Run(context.Background(), e, fx.spec)
	assert.Nil(t, res)
	var ce *CrashError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "replay engine crashed: segfault in the model", err.Error())
	assert.Equal(t, "init text", kinds(evs))
}

func TestReplayMaxTurns(t *testing.T) {
	fx := newFixture(t, "", nil)
	fx.spec.MaxTurns = 1
	e := script(t,
		`{"text": "first"}`,
		`{"tool": "add_comment", "args": {"repo": "o/r", "number": 5, "body": "one"}}`,
		`{"tool": "add_comment", "args": {"repo": "o/r", "number": 5, "body": "two"}}`,
	)
	evs, res, err := enginetest.Run(context.Background(), e, fx.spec)
	require.NoError(t, err)
	require.NotNil(t, res)
	assert.Equal(t, "error_max_turns", res.Subtype)
	assert.True(t, res.IsError)
	assert.Equal(t, 2, res.NumTurns, "as Claude Code: the refused turn is counted")
	assert.Equal(t, "Reached maximum number of turns (1)", res.Text)
	assert.Equal(t, "init text tool_use tool_result result", kinds(evs))
	es, err := outputs.ReadFile(filepath.Join(fx.runDir, contract.OutputsFile))
	require.NoError(t, err)
	assert.Len(t, es, 1, "the call past the limit never reached the gate")
}

func TestReplayStopKillsPromptly(t *testing.T) {
	fx := newFixture(t, "", nil)
	call := `{"tool": "noop", "args": {"reason": "again"}}`
	e := script(t, call, call, call, call, call, call, `{"sleep_ms": 600000}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	uses := 0
	// The agent mode's loop detector cancels the context; here after 3 calls.
	res, err := e.Run(ctx, fx.spec, func(ev session.Event) {
		if ev.Kind == session.EventToolUse {
			if uses++; uses == 3 {
				cancel()
			}
		}
	})
	assert.Nil(t, res)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 3, uses)
}

func TestReplaySleepStops(t *testing.T) {
	e := script(t, `{"sleep_ms": 600000}`)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := e.Run(ctx, engine.Spec{}, func(ev session.Event) {
		if ev.Kind == session.EventInit {
			cancel()
		}
	})
	assert.Nil(t, res)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestReplayGateMissing(t *testing.T) {
	spec := engine.Spec{GateCommand: []string{filepath.Join(t.TempDir(), "no-such-runner"), "mcp"}}
	e := script(t, `{"tool": "noop", "args": {"reason": "x"}}`, `{"text": "bye"}`)
	evs, res, err := enginetest.Run(context.Background(), e, spec)
	require.NoError(t, err)
	assert.Equal(t, "init unknown tool_use tool_result text result", kinds(evs))
	assert.Contains(t, evs[1].Text, "gate MCP server failed to start")
	assert.Equal(t, []session.MCPServer{{Name: "gate", Status: "failed"}}, evs[0].Init.MCPServers)
	assert.True(t, evs[3].IsError)
	assert.Contains(t, evs[3].Output, "No such tool available: mcp__gate__noop")
	assert.Equal(t, "success", res.Subtype)
}

func TestReplayBashAndPullRequest(t *testing.T) {
	work := t.TempDir()
	origin := t.TempDir()
	git(t, origin, "init", "--quiet", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(origin, "README.md"), []byte("hi\n"), 0o644))
	git(t, origin, "add", "-A")
	git(t, origin, "commit", "--quiet", "-m", "initial")
	git(t, work, "clone", "--quiet", origin, ".")

	fx := newFixture(t, "", func(c *gate.Config) { c.WorkDir = work; c.DefaultBase = "main" })
	fx.spec.AllowedTools = []string{"Bash(git:*)", "Bash(echo:*)"}
	fx.spec.Env = append(fx.spec.Env, "HOME="+t.TempDir(), "GIT_AUTHOR_NAME=Agent", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=Agent", "GIT_COMMITTER_EMAIL=a@example.com")
	t.Setenv("MR_REPLAY_PROBE", "leaked")
	e := script(t,
		`{"bash": "echo \"[$MR_REPLAY_PROBE]\" > NOTES.md"}`,
		`{"bash": "echo fix > README.md"}`,
		`{"bash": "git add -A && git commit -q -m 'Fix README'"}`,
		`{"bash": "rm -rf /tmp/nothing"}`,
		`{"bash": "git log --oneline -1"}`,
		`{"bash": "git nonsense"}`,
		`{"tool": "create_pull_request", "args": {"repo": "o/r", "title": "Fix README", "body": "Small fix."}}`,
	)
	evs, res, err := enginetest.Run(context.Background(), e, fx.spec)
	require.NoError(t, err)
	results := map[string]session.Event{}
	var order []string
	for _, ev := range evs {
		if ev.Kind == session.EventToolUse {
			order = append(order, ev.ToolCallID)
		}
		if ev.Kind == session.EventToolResult {
			results[ev.ToolCallID] = ev
		}
	}
	require.Len(t, order, 7)
	assert.Equal(t, "[]", readFile(t, filepath.Join(work, "NOTES.md")), "the step sees only Spec.Env")
	assert.False(t, results[order[2]].IsError, results[order[2]].Output)
	assert.True(t, results[order[3]].IsError)
	assert.Contains(t, results[order[3]].Output, "Permission to use Bash has been denied")
	assert.Contains(t, results[order[4]].Output, "Fix README")
	assert.True(t, results[order[5]].IsError)
	assert.Contains(t, results[order[5]].Output, "Exit code 1")
	pr := results[order[6]]
	assert.False(t, pr.IsError, pr.Output)
	assert.Contains(t, pr.Output, `the pull request "Fix README" in o/r (1 commit(s)`)
	assert.Equal(t, []string{"Bash"}, res.PermissionDenials)
	assert.Equal(t, 7, res.NumTurns)

	es, err := outputs.ReadFile(filepath.Join(fx.runDir, contract.OutputsFile))
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, "pr-0.bundle", es[0].Bundle)
	assert.Equal(t, git(t, work, "rev-parse", "HEAD"), es[0].HeadSHA)
	assert.FileExists(t, filepath.Join(fx.runDir, "pr-0.bundle"))
}

func TestNewReadsScriptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"text":"hi"}`+"\n"), 0o644))
	e, err := New(path)
	require.NoError(t, err)
	assert.Equal(t, "replay", e.Name())
	_, res, err := enginetest.Run(context.Background(), e, engine.Spec{})
	require.NoError(t, err)
	assert.Equal(t, 1, res.NumTurns)

	require.NoError(t, os.WriteFile(path, []byte(`{"txt":"hi"}`), 0o644))
	_, err = New(path)
	var se *ScriptError
	assert.ErrorAs(t, err, &se)
	_, err = New(filepath.Join(t.TempDir(), "missing"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	// no auto maintenance after a commit: one more process, on a
	// repository that is thrown away
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "maintenance.auto=false", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	return strings.TrimSpace(out.String())
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
