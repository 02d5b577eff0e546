package gemini

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/engine"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/fakemodel/gemini"
	"github.com/mention-runner/mention-runner/internal/session"
)

func TestMain(m *testing.M) {
	claudetest.ServeGateIfAsked()
	os.Exit(m.Run())
}

// realSpec is a spec for the real CLI against fake, with the test binary
// as the gate.
func realSpec(t *testing.T, fake *fakegemini.Server) (engine.Spec, string) {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "checkout")
	require.NoError(t, os.MkdirAll(home, 0o700))
	require.NoError(t, os.MkdirAll(work, 0o700))
	self, err := os.Executable()
	require.NoError(t, err)
	gateLog := filepath.Join(dir, "gate-calls.jsonl")
	return engine.Spec{
		Prompt: "say hi", WorkDir: work, RunDir: dir, GateCommand: []string{self},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GEMINI_API_KEY=" + claudetest.DummyAPIKey,
			"GOOGLE_GEMINI_BASE_URL=" + fake.URL(), claudetest.GateLogEnv + "=" + gateLog},
		MaxTurns: 5, Model: "gemini-fake",
	}, gateLog
}

func TestRealCLI(t *testing.T) {
	bin := claudetest.GeminiCLI.Binary(t)
	fake := fakegemini.New(fakemodel.Sequence(
		fakemodel.ToolCall("", "mcp_gate_add_comment", map[string]any{"body": "hello"}),
		fakemodel.Text("done"),
	)).Start()
	defer fake.Close()
	spec, gateLog := realSpec(t, fake)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var evs []session.Event
	start := time.Now()
	res, err := New(bin).Run(ctx, spec, func(ev session.Event) { evs = append(evs, ev) })
	t.Logf("took %s", time.Since(start))
	require.NoError(t, err)
	require.NotNil(t, res)
	assert.False(t, res.IsError)
	calls, err := claudetest.ReadGateCalls(gateLog)
	require.NoError(t, err)
	require.Len(t, calls, 1)
	assert.Equal(t, "add_comment", calls[0].Tool)
	for _, ev := range evs {
		t.Logf("%s %s %s %s", ev.Time.Format("15:04:05.000"), ev.Kind, ev.ToolName, ev.Text)
	}
}
