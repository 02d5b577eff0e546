package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/demo"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
)

// TestFlowClaudeRightCode: the agent works on the right code with no token
// in its job. On a pull request it reads a file that exists only on the
// PR's head (the fetch job fetched the recorded head commit, not the
// default branch); in a private repository the fetch job's bot token gets
// the code (an anonymous checkout would fail). The real Claude Code reads
// the file and posts what it read; the comment lands on the thread.
func TestFlowClaudeRightCode(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end with the real Claude Code")
	}
	real := claudetest.Binary(t)
	tests := []struct {
		name        string
		pr, private bool
		file, want  string
	}{
		{"PR head only file", true, false, demo.PROnlyFile, strings.TrimSpace(demo.PROnlyContent)},
		{"private repository", false, true, "README.md", "# widgets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
				switch req.Turn() {
				case 0:
					return fakemodel.ToolCall("", "Read", map[string]any{"file_path": tt.file})
				case 1:
					rs := req.ToolResults()
					body := "could not read " + tt.file
					if len(rs) > 0 && !rs[len(rs)-1].IsError {
						body = "I read " + tt.file + ": " + rs[len(rs)-1].Content
					}
					return fakemodel.ToolCall("", "mcp__gate__add_comment", map[string]any{"repo": demo.TargetRepo, "number": 1, "body": body})
				}
				return fakemodel.Text("Done.")
			})
			fake := fakemodel.New(script).Start()
			t.Cleanup(fake.Close)
			w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: real, pr: tt.pr, private: tt.private, extraEnv: []string{
				"ANTHROPIC_BASE_URL=" + fake.URL(),
				"ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey,
				"CLAUDE_CODE_MAX_RETRIES=0",
			}})
			require.NotNil(t, f.Fetched)
			assertNoToken(t, "agent job", f.Agent.Env)
			assertAgentHasNoToken(t, f)
			assert.Contains(t, strings.Join(f.Fetched.Env, "\n"), "BOT_TOKEN=", "the fetch job holds the bot's token")

			var bodies []string
			for _, c := range w.Sim.Comments(demo.TargetRepo, w.Issue) {
				if c.GetUser().GetLogin() == demo.BotLogin {
					bodies = append(bodies, c.GetBody())
				}
			}
			require.Len(t, bodies, 1, "the bot commented once")
			assert.Contains(t, bodies[0], "I read "+tt.file)
			assert.Contains(t, bodies[0], tt.want)
		})
	}
}
