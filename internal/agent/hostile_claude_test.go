package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/checkout"
	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
	"github.com/mention-runner/mention-runner/internal/gitexec"
	"github.com/mention-runner/mention-runner/internal/hostile"
	"github.com/mention-runner/mention-runner/internal/outputs"
)

// hostileTarget commits a hostile repository (internal/hostile) as
// octo/hello's main branch on a file:// "server", fetches it the way the
// fetch job does, and points the fixture's agent stage at the pack. It
// returns the canary directory and the canaries.
func hostileTarget(t *testing.T, f *fixture) (string, []hostile.Canary) {
	t.Helper()
	canaryDir := t.TempDir()
	src := t.TempDir()
	canaries, err := hostile.WriteRepo(src, canaryDir, false)
	require.NoError(t, err)
	g := gitexec.Isolated(src, "", 0)
	g.Timeout = 60e9
	ctx := context.Background()
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=Mallory", "-c", "user.email=m@example.com", "commit", "--quiet", "-m", "hostile"},
	} {
		_, err := g.Run(ctx, args...)
		require.NoError(t, err)
	}
	root := t.TempDir()
	bare := filepath.Join(root, "octo", "hello.git")
	_, err = g.Run(ctx, "clone", "--quiet", "--bare", src, bare)
	require.NoError(t, err)
	target, err := checkout.FromContext(f.context)
	require.NoError(t, err)
	art := filepath.Join(f.dir, "target-code")
	_, err = checkout.Fetch(ctx, target, checkout.FetchOptions{ServerURL: "file://" + root, OutDir: art})
	require.NoError(t, err)
	f.env["MR_TARGET_DIR"] = art
	// a loaded machine can be slow; the limit is not what these tests test
	f.env["MR_TIMEOUT"] = "3m"
	f.env["MR_WORKSPACE"] = filepath.Join(f.dir, "work")
	require.NoError(t, os.RemoveAll(filepath.Join(f.dir, "target")))
	return canaryDir, canaries
}

func noCanaries(t *testing.T, canaryDir string, canaries []hostile.Canary) {
	t.Helper()
	assert.Empty(t, hostile.Sprung(canaryDir, canaries), "something from the target ran")
	ents, err := os.ReadDir(canaryDir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if e.Name() != "node-options.js" {
			names = append(names, e.Name())
		}
	}
	assert.Empty(t, names, "files appeared in the canary directory")
}

// noGuidance asserts the target's instruction files never reached the
// model as guidance (they are data the agent may read, not instructions).
func noGuidance(t *testing.T, fake *fakemodel.Server) {
	t.Helper()
	for _, req := range fake.AgentRequests() {
		assert.NotContains(t, req.System, hostile.CLAUDEMDMarker, "CLAUDE.md reached the system prompt")
		if req.Turn() == 0 {
			assert.NotContains(t, req.UserText(), hostile.CLAUDEMDMarker, "CLAUDE.md reached the first user message")
		}
	}
}

// TestClaudeHostileRepoDefaultTools: the real Claude Code with the default
// tools on a repository full of hooks, settings, MCP servers, commands,
// agents, skills and instructions: none of them runs or configures the
// engine, and the run completes. The same run (one CLI start: each costs
// seconds of CPU) shows the read scope: the engine reads the checkout,
// nothing outside it, and has no shell or file-writing tool.
func TestClaudeHostileRepoDefaultTools(t *testing.T) {
	t.Parallel() // a real CLI run: mostly waiting on the process
	script := fakemodel.Sequence(
		toolUse("Read", map[string]any{"file_path": "README.md"}),
		toolUse("Read", map[string]any{"file_path": "CLAUDE.md"}),
		toolUse("Read", map[string]any{"file_path": "/etc/hostname"}),
		toolUse("Bash", map[string]any{"command": "env > /tmp/leak"}),
		toolUse("Write", map[string]any{"file_path": "x.txt", "content": "x"}),
		toolUse("mcp__gate__noop", map[string]any{"reason": "just looking"}),
		fakemodel.Text("Done."),
	)
	f, fake, eng := claudeFixture(t, "@helperbot have a look at this repo", script)
	canaryDir, canaries := hostileTarget(t, f)

	out, err := f.run(t, eng)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, out.Status)
	assert.True(t, out.Deliverable, "noop counts as a deliverable")
	noCanaries(t, canaryDir, canaries)
	noGuidance(t, fake)

	agent := fake.AgentRequests()
	require.Len(t, agent, 7)
	assert.ElementsMatch(t, []string{"Read", "Glob", "Grep", "mcp__gate__add_comment", "mcp__gate__create_issue",
		"mcp__gate__create_pull_request", "mcp__gate__noop"}, agent[0].ToolNames(), "no tool or MCP server from the target; no shell, no write tool")
	assert.NotEqual(t, "hostile-model-from-settings", agent[0].Model)
	result := func(i int) fakemodel.Block {
		rs := agent[i].ToolResults()
		require.NotEmpty(t, rs)
		return rs[len(rs)-1]
	}
	assert.False(t, result(1).IsError, "reading the checkout is allowed: %s", result(1).Content)
	assert.Contains(t, result(1).Content, "# hostile")
	assert.False(t, result(2).IsError, "the agent may read CLAUDE.md as data: %s", result(2).Content)
	assert.Contains(t, result(2).Content, hostile.CLAUDEMDMarker)
	for i, what := range map[int]string{3: "read outside the checkout", 4: "Bash", 5: "Write"} {
		assert.True(t, result(i).IsError, "%s must be refused: %s", what, result(i).Content)
	}
	assert.NoFileExists(t, filepath.Join(f.env["MR_WORKSPACE"], "x.txt"))
	entries, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, outputs.KindNoop, entries[0].Kind)
}
