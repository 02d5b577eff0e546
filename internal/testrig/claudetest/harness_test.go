package claudetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

func TestMain(m *testing.M) {
	ServeGateIfAsked() // the re-executed test binary becomes the MCP server
	os.Exit(m.Run())
}

var gateTools = []string{"mcp__gate__add_comment", "mcp__gate__noop"}

// claudeRun is one finished Claude Code run against a fake model.
type claudeRun struct {
	res    Result
	events []session.Event
	fake   *fakemodel.Server
	calls  []GateCall
}

func (r claudeRun) result(t *testing.T) *session.Result {
	t.Helper()
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Kind == session.EventResult {
			return r.events[i].Result
		}
	}
	t.Fatalf("no result event; stderr:\n%s", r.res.Stderr)
	return nil
}

func (r claudeRun) kinds(k session.EventKind) []session.Event {
	var out []session.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// runSpec describes one run; zero values mean the defaults.
type runSpec struct {
	name      string // capture file name
	script    fakemodel.Script
	maxTurns  int
	prompt    string
	mcpConfig func(dir string) string // replaces the fake gate config
	extraArgs []string
	allowed   []string                // engine tools allowed besides the gate's
	env       func([]string) []string // edits OfflineEnv
}

// runClaude runs the real binary once. Every run has its own fake model,
// home, working directory and gate log, so the Claude tests run in
// parallel. With CLAUDETEST_CAPTURE_DIR set the raw stdout is saved there
// as <name>.jsonl (how streamjson/testdata was made).
func runClaude(t *testing.T, name string, script fakemodel.Script, maxTurns int, prompt string) claudeRun {
	t.Helper()
	return runClaudeSpec(t, runSpec{name: name, script: script, maxTurns: maxTurns, prompt: prompt})
}

func runClaudeSpec(t *testing.T, s runSpec) claudeRun {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
	require.NoError(t, os.MkdirAll(work, 0o755))
	fake := fakemodel.New(s.script).Start()
	t.Cleanup(fake.Close)
	cfg, gateLog, err := WriteGateConfig(dir)
	require.NoError(t, err)
	if s.mcpConfig != nil {
		cfg = s.mcpConfig(dir)
	}
	env := OfflineEnv(home, fake.URL())
	if s.env != nil {
		env = s.env(env)
	}

	res, err := Run(context.Background(), Options{
		Bin: bin, Dir: work, Env: env,
		Args: append(Args(cfg, append(append([]string{}, gateTools...), s.allowed...), s.maxTurns), s.extraArgs...), Prompt: s.prompt,
	})
	require.NoError(t, err, "stderr:\n%s", res.Stderr)
	if capDir := os.Getenv("CLAUDETEST_CAPTURE_DIR"); capDir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(capDir, s.name+".jsonl"), res.Stdout, 0o644))
		for _, req := range fake.Requests() {
			if len(req.Body) > 0 {
				p := filepath.Join(capDir, fmt.Sprintf("%s.request%d.json", s.name, req.Seq))
				require.NoError(t, os.WriteFile(p, req.Body, 0o644))
			}
		}
	}

	var events []session.Event
	dec := streamjson.NewDecoder(bytes.NewReader(res.Stdout))
	for {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		events = append(events, ev)
	}
	calls, err := ReadGateCalls(gateLog)
	require.NoError(t, err)
	return claudeRun{res: res, events: events, fake: fake, calls: calls}
}
