package e2e

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/demo"
	"github.com/mention-runner/mention-runner/internal/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
	fakegemini "github.com/mention-runner/mention-runner/internal/fakemodel/gemini"
	fakeopenai "github.com/mention-runner/mention-runner/internal/fakemodel/openai"
)

// TestFlowEnginePR: with the operator's pull-request tool set (Edit,
// Write), the real Codex CLI and the real Gemini CLI, each against its
// fake API, read the checkout, edit a file in it and ask the gate for a
// pull request; the gate commits, publish pushes, and the pull request is
// opened on the simulator.
func TestFlowEnginePR(t *testing.T) {
	t.Parallel()
	needBins(t)
	for _, tc := range []struct {
		engine    string
		bin       func(testing.TB) string
		gate, fil func(string) string
		start     func(fakemodel.Script) (env []string, close func())
	}{
		{demo.EngineCodex, claudetest.Codex.Binary,
			func(s string) string { return contract.EngineToolName(s) },
			func(s string) string { return "mcp__" + contract.FilesServer + "__" + s },
			func(sc fakemodel.Script) ([]string, func()) {
				s := fakeopenai.New(sc).Start()
				return []string{"OPENAI_BASE_URL=" + s.URL() + "/v1", "OPENAI_API_KEY=" + claudetest.DummyAPIKey, "MR_MODEL=gpt-fake"}, s.Close
			}},
		{demo.EngineGemini, claudetest.GeminiCLI.Binary,
			func(s string) string { return gemini.ToolName(contract.GateServer, s) },
			func(s string) string { return gemini.ToolName(contract.FilesServer, s) },
			func(sc fakemodel.Script) ([]string, func()) {
				s := fakegemini.New(sc).Start()
				return []string{"GOOGLE_GEMINI_BASE_URL=" + s.URL(), "GEMINI_API_KEY=" + claudetest.DummyAPIKey, "MR_MODEL=gemini-fake"}, s.Close
			}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			t.Parallel()
			bin := tc.bin(t)
			script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
				switch req.Turn() {
				case 0:
					return fakemodel.ToolCall("", tc.fil(contract.ToolReadFile), map[string]any{"path": "README.md"})
				case 1:
					return fakemodel.ToolCall("", tc.fil(contract.ToolWriteFile), map[string]any{"path": ".gitattributes", "content": "* text=auto eol=lf\n"})
				case 2:
					return fakemodel.ToolCall("", tc.gate(contract.ToolCreatePullRequest), map[string]any{"repo": demo.TargetRepo,
						"title": "Normalize line endings with .gitattributes", "body": "Windows checkouts get LF endings.", "base": "main"})
				}
				return fakemodel.Text("I opened a pull request.")
			})
			env, stop := tc.start(script)
			t.Cleanup(stop)
			o := demo.Options{Bins: bins, OutDir: t.TempDir(), Engine: tc.engine, EngineEnv: env,
				Settings: settings("MR_TIMEOUT=3m"), DispatcherSettings: dispatcherSettings}
			if tc.engine == demo.EngineCodex {
				o.CodexBin = bin
			} else {
				o.GeminiBin = bin
			}
			sc := demo.Scenario{Name: "pr-" + tc.engine,
				Comments: []string{"@" + demo.BotLogin + " !cfg repo=" + demo.TargetRepo + " no-issue\nPlease fix the line endings and open a pull request."},
				Settings: []string{"MR_ALLOWED_TOOLS=Edit,Write"},
				Want:     demo.Want{Run: true, Status: "completed", PRs: 1}}
			ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
			defer cancel()
			out, err := demo.RunScenario(ctx, sc, o)
			if out != nil && out.World != nil {
				t.Cleanup(func() { out.World.Sim.Close() })
			}
			require.NoError(t, err)
			if !assert.Empty(t, out.Problems) && out.Flow != nil {
				if sum, err := out.Flow.Summarize(); err == nil {
					b, _ := os.ReadFile(sum.Transcript)
					t.Logf("transcript:\n%s", b)
				}
			}
			var prs []string
			for _, is := range out.World.Sim.Issues(demo.TargetRepo) {
				if is.IsPullRequest() {
					prs = append(prs, is.GetTitle())
				}
			}
			assert.Equal(t, []string{"Normalize line endings with .gitattributes"}, prs, "the pull request is open on the target")
			assertAgentHasNoToken(t, out.Flow)
		})
	}
}
