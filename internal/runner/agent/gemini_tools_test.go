package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	"github.com/mention-runner/mention-runner/internal/testrig/hangguard"
)

// TestGeminiOwnToolsConfined: the real Gemini CLI (offline, against the
// fake Gemini API) is offered none of its own tools that take a glob
// (glob, grep_search) or list directories; a model asking for them
// anyway — glob "../../**/outputs.jsonl" (the run directory above the
// CLI's working directory) and "../../../etc/pass*", grep_search with an
// include reaching up — gets an error and no path outside the workspace.
// Its read_file stays, for the copy of the thread's data, and refuses a
// path leading out.
func TestGeminiOwnToolsConfined(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real engine CLI")
	}
	t.Parallel()
	ce := cliEngines[1]
	require.Equal(t, gemini.Name, ce.name)
	var f *fixture
	probes := []probe{
		{"glob", func() map[string]any { return map[string]any{"pattern": "../../**/outputs.jsonl"} }},
		{"glob", func() map[string]any { return map[string]any{"pattern": "../../../etc/pass*"} }},
		{"glob", func() map[string]any { return map[string]any{"pattern": "**/*", "dir_path": "../.."} }},
		{"grep_search", func() map[string]any {
			return map[string]any{"pattern": "root", "include_pattern": "../../../etc/pass*"}
		}},
		{"grep_search", func() map[string]any { return map[string]any{"pattern": "kind", "dir_path": "../.."} }},
		{"list_directory", func() map[string]any { return map[string]any{"dir_path": "../.."} }},
		{"read_file", func() map[string]any { return map[string]any{"file_path": "../../outputs.jsonl"} }},
		{"read_file", func() map[string]any { return map[string]any{"file_path": "/etc/passwd"} }},
	}
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch n := req.Turn(); {
		case n == 0: // a queued write: the run directory has an outputs.jsonl to find
			return toolUse(ce.gateTool("add_comment"), map[string]any{"repo": testRepo, "number": testNumber, "body": "looking"})
		case n <= len(probes):
			return toolUse(probes[n-1].tool, probes[n-1].args())
		}
		return fakemodel.Text("Done.")
	})
	f = newFixture(t, "@helperbot look around")
	eng, fake := ce.start(t, f, script)
	f.env["MR_TIMEOUT"] = hangguard.EngineTimeout
	f.env["MR_MAX_TURNS"] = "30"

	out, err := f.run(t, eng)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, out.Status)
	require.FileExists(t, filepath.Join(f.runDir(), "outputs.jsonl"), "there was something to find")
	agent := fake.AgentRequests()
	require.Len(t, agent, 2+len(probes))
	names := agent[0].ToolNames()
	for _, tool := range []string{"glob", "grep_search", "list_directory", "search_file_content", "run_shell_command", "web_fetch"} {
		assert.NotContains(t, names, tool, "the Gemini CLI's own %s is not offered", tool)
	}
	assert.Contains(t, names, "read_file", "read_file stays, for the copy of the thread's data")
	passwd, _ := os.ReadFile("/etc/passwd")
	for i, p := range probes {
		res := lastToolResult(t, agent[2+i])
		what := p.tool + " " + fmt.Sprint(p.args())
		assert.True(t, res.IsError, "%s must fail: %.300s", what, res.Content)
		assert.NotContains(t, res.Content, f.runDir(), "%s names no path outside the workspace", what)
		assert.NotContains(t, res.Content, "outputs.jsonl\n", "%s lists no outputs.jsonl", what)
		assert.NotContains(t, res.Content, "/etc/passwd\n", what)
		if len(passwd) > 0 {
			first, _, _ := strings.Cut(string(passwd), "\n")
			assert.NotContains(t, res.Content, first, "%s shows nothing of /etc/passwd", what)
		}
		assert.NotContains(t, res.Content, `"kind"`, "%s shows nothing of outputs.jsonl", what)
	}
}
