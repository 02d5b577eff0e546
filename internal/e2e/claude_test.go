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
// Messages API: the model comments (allowed) and opens an issue (denied by
// here-only), then ends. The engine runs behind a wrapper that records its
// environment, so the test sees exactly what Claude Code was given.
func TestFlowClaude(t *testing.T) {
	t.Parallel()
	needBins(t)
	real := claudetest.Binary(t) // skips unless installed or required

	const body = "Line endings: Windows checkouts get CRLF; add `* text=auto eol=lf` to .gitattributes."
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0:
			return fakemodel.ToolCall("", "mcp__gate__add_comment", map[string]any{"repo": demo.TargetRepo, "number": 1, "body": body})
		case 1:
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

	w, f := runFlow(t, flowCase{engine: demo.EngineClaude, claude: wrapper, extraEnv: []string{
		"ANTHROPIC_BASE_URL=" + fake.URL(),
		"ANTHROPIC_API_KEY=" + claudetest.DummyAPIKey,
		"CLAUDE_CODE_MAX_RETRIES=0",
	}})
	assert.Empty(t, fake.Problems())

	// the model saw the denial as a tool error and could adapt
	agent := fake.AgentRequests()
	require.GreaterOrEqual(t, len(agent), 3)
	res := agent[2].ToolResults() // every result so far; the last is create_issue's
	require.Len(t, res, 2)
	assert.False(t, res[0].IsError, res[0].Content)
	assert.True(t, res[1].IsError)
	assert.Contains(t, res[1].Content, "here-only")

	assertFinalState(t, w, f, body)
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
