package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/claudetest"
	"github.com/mention-runner/mention-runner/internal/demo"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
)

// TestFlowClaude runs the flow with the real Claude Code against the fake
// Messages API on a private repository: the model reads README.md (the
// fetch job's bot token got the code; an anonymous checkout would fail),
// comments (allowed) and opens an issue (denied by here-only), then ends.
// The engine runs behind a wrapper that records its environment, so the
// test sees exactly what Claude Code was given. (One flow carries the
// private-repository read and the comment/denial flow: each real Claude
// run costs seconds of CPU. Reading a file only the PR's head has is
// TestFlowClaudePRFromPR's.)
func TestFlowClaude(t *testing.T) {
	t.Parallel()
	needBins(t)
	real := claudetest.Binary(t) // skips unless installed or required

	const body = "Line endings: Windows checkouts get CRLF; add `* text=auto eol=lf` to .gitattributes."
	const readme, want = "README.md", "# widgets"
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0:
			return fakemodel.ToolCall("", "Read", map[string]any{"file_path": readme})
		case 1:
			// the comment says whether the private code was read
			rs := req.ToolResults()
			if len(rs) == 0 || rs[len(rs)-1].IsError || !strings.Contains(rs[len(rs)-1].Content, want) {
				return fakemodel.ToolCall("", "mcp__gate__add_comment", map[string]any{"repo": demo.TargetRepo, "number": 1, "body": "could not read " + readme})
			}
			return fakemodel.ToolCall("", "mcp__gate__add_comment", map[string]any{"repo": demo.TargetRepo, "number": 1, "body": body})
		case 2:
			return fakemodel.ToolCall("", "mcp__gate__create_issue", map[string]any{"repo": demo.TargetRepo, "title": "Normalize line endings", "body": "Track the CRLF fix."})
		}
		return fakemodel.Text("I commented; the tracking issue was denied (here-only).")
	})
	fake := fakemodel.New(script).Start()
	t.Cleanup(fake.Close)

	dir := t.TempDir()
	envFile := filepath.Join(dir, "claude-env.txt")
	wrapper := filepath.Join(dir, "claude")
	sh := fmt.Sprintf("#!/bin/sh\n{ env; echo '--- end of env ---'; } >> %s\nexec %s \"$@\"\n", shellQuote(envFile), shellQuote(real))
	require.NoError(t, os.WriteFile(wrapper, []byte(sh), 0o755))

	w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: wrapper, private: true, extraEnv: []string{
		"ANTHROPIC_BASE_URL=" + fake.URL(),
		"ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey,
		"CLAUDE_CODE_MAX_RETRIES=0",
	}})
	assert.Empty(t, fake.Problems())

	// the private repository's code reached the agent through the fetch job
	require.NotNil(t, f.Fetched)
	assert.Contains(t, strings.Join(f.Fetched.Env, "\n"), "BOT_TOKEN=", "the fetch job holds the bot's token")

	// the model saw the denial as a tool error and could adapt
	agent := fake.AgentRequests()
	require.GreaterOrEqual(t, len(agent), 4)
	res := agent[3].ToolResults() // every result so far; the last is create_issue's
	require.Len(t, res, 3)
	assert.False(t, res[0].IsError, "reading the private checkout: %s", res[0].Content)
	assert.Contains(t, res[0].Content, want)
	assert.False(t, res[1].IsError, res[1].Content)
	assert.True(t, res[2].IsError)
	assert.Contains(t, res[2].Content, "here-only")

	assertFinalState(t, w, f, body) // the comment landed, once, with the body for "read it"
	assertAgentHasNoToken(t, f)

	raw, err := os.ReadFile(envFile)
	require.NoError(t, err, "the wrapper ran")
	envs := strings.Split(strings.TrimSpace(string(raw)), "--- end of env ---")
	for _, e := range envs {
		if strings.TrimSpace(e) == "" {
			continue
		}
		vars := strings.Split(strings.TrimSpace(e), "\n")
		assertNoToken(t, "engine", vars)
		for _, kv := range vars {
			k, _, _ := strings.Cut(kv, "=")
			assert.False(t, strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "MR_"),
				"engine environment has %s", k)
		}
		assert.Contains(t, vars, "ANTHROPIC_BASE_URL="+fake.URL())
	}
	assertRerunPublishWritesNothing(t, w, f)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
