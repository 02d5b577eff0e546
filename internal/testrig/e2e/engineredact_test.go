package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// TestEnginesRedactWhatAReaderSees runs each real engine CLI offline
// against its fake model API; the model answers with a comment holding a
// token raw and split in forms a reader still sees as the token. Nothing
// the flow posts to GitHub, and no file of any run artifact, holds it.
func TestEnginesRedactWhatAReaderSees(t *testing.T) {
	t.Parallel()
	needBins(t)
	gh := "ghp_" + strings.Repeat("E9g1n3T0k", 4)
	require.Len(t, gh[4:], 36)
	split := gh[:10] + "&#8203;" + gh[10:] // an invisible character between, as HTML
	body := "Use " + gh + " or " + split + " to log in."
	for _, tc := range []struct {
		engine string
		bin    func(testing.TB) string
		set    func(*flowCase, string)
	}{
		{demo.EngineClaude, claudetest.ClaudeCode.Binary, func(c *flowCase, b string) { c.claude = b }},
		{demo.EngineCodex, claudetest.Codex.Binary, func(c *flowCase, b string) { c.codex = b }},
		{demo.EngineGemini, claudetest.GeminiCLI.Binary, func(c *flowCase, b string) { c.gemini = b }},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(t.TempDir(), "script.jsonl")
			step, err := json.Marshal(map[string]any{"tool": "add_comment", "args": map[string]any{"repo": demo.TargetRepo, "number": 1, "body": body}})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(script, []byte(string(step)+"\n"+`{"text": "Done."}`+"\n"), 0o644))
			fake, err := demo.StartFakeAPI(tc.engine, script)
			require.NoError(t, err)
			t.Cleanup(fake.Close)
			out := t.TempDir()
			c := flowCase{engine: tc.engine, extraEnv: fake.EngineEnv, outDir: out,
				comment: "@" + demo.BotLogin + " !cfg here-only\nplease answer with the token " + gh}
			tc.set(&c, tc.bin(t))
			w, f := runFlow(t, c)
			require.NotZero(t, f.LogIssue)

			shows := func(text string) bool {
				return strings.Contains(strings.ReplaceAll(text, "&#8203;", ""), gh[4:])
			}
			posted := 0
			for _, cm := range w.Sim.Comments(demo.TargetRepo, w.Issue) {
				if strings.EqualFold(cm.GetUser().GetLogin(), demo.BotLogin) {
					posted++
					assert.False(t, shows(cm.GetBody()), "the bot's comment on the thread shows the token: %q", cm.GetBody())
					assert.Equal(t, 2, strings.Count(cm.GetBody(), "[REDACTED"), "both forms redacted, the rest kept: %q", cm.GetBody())
					assert.Contains(t, cm.GetBody(), "to log in.")
				}
			}
			assert.Equal(t, 1, posted, "the agent's comment was posted (redacted)")
			for _, cm := range w.Sim.Comments(demo.ControlRepo, f.LogIssue) {
				assert.False(t, shows(cm.GetBody()), "a log-issue comment shows the token")
			}
			li, _ := w.Sim.Issue(demo.ControlRepo, f.LogIssue)
			require.NotNil(t, li)
			assert.False(t, shows(li.GetBody()), "the log issue shows the token")
			// every run record (context-* is the hashed input publish checks,
			// kept as GitHub sent it: docs/security.md)
			arts := filepath.Join(out, "artifacts")
			names, err := os.ReadDir(arts)
			require.NoError(t, err)
			for _, a := range names {
				if !strings.HasPrefix(a.Name(), "run-") {
					continue
				}
				require.NoError(t, filepath.WalkDir(filepath.Join(arts, a.Name()), func(p string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					raw, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					assert.False(t, shows(string(raw)), "%s holds the token", p)
					return nil
				}))
			}
		})
	}
}
