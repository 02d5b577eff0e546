package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/checkout"
	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/fakemodel"
	"github.com/mention-runner/mention-runner/internal/gitexec"
	"github.com/mention-runner/mention-runner/internal/hostile"
	"github.com/mention-runner/mention-runner/internal/outputs"
	"github.com/mention-runner/mention-runner/internal/policy"
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

// TestClaudeHostileRepoPRTools: the same with the pull-request tool set
// (Edit, Write): the agent reads and writes inside its checkout and
// nowhere else — not /etc, not /proc (the job's environment), not the run
// directory (its own record and outputs.jsonl), not its home — then edits
// files, the gate commits and bundles them, and still nothing from the
// target runs, not the git hooks either. One CLI start carries both.
func TestClaudeHostileRepoPRTools(t *testing.T) {
	t.Parallel() // a real CLI run: mostly waiting on the process
	var f *fixture
	type try struct {
		tool  string
		input func() map[string]any
		file  func() string // a file that must not exist afterwards ("" = none)
	}
	outsideFile := filepath.Join(os.TempDir(), "mr-outside-"+strings.ReplaceAll(t.Name(), "/", "_"))
	tries := []try{
		{"Read", func() map[string]any { return map[string]any{"file_path": "/etc/passwd"} }, nil},
		{"Read", func() map[string]any { return map[string]any{"file_path": "/proc/self/environ"} }, nil},
		{"Read", func() map[string]any { return map[string]any{"file_path": filepath.Join(f.runDir(), GateConfigFile)} }, nil},
		{"Read", func() map[string]any { return map[string]any{"file_path": "../runs/context.json"} }, nil},
		{"Read", func() map[string]any { return map[string]any{"file_path": "~/.claude.json"} }, nil},
		{"Glob", func() map[string]any { return map[string]any{"pattern": "*", "path": "/etc"} }, nil},
		{"Grep", func() map[string]any { return map[string]any{"pattern": "root", "path": "/etc"} }, nil},
		{"Write", func() map[string]any { return map[string]any{"file_path": outsideFile, "content": "x"} }, func() string { return outsideFile }},
		// outputs.jsonl: requireFixedReadmePR finds the gate's pull request its only entry
		{"Write", func() map[string]any {
			return map[string]any{"file_path": filepath.Join(f.runDir(), "outputs.jsonl"), "content": `{"kind":"comment"}`}
		}, nil},
		{"Write", func() map[string]any { return map[string]any{"file_path": "../escape.txt", "content": "x"} }, func() string { return filepath.Join(f.dir, "escape.txt") }},
		{"Write", func() map[string]any { return map[string]any{"file_path": "~/.bashrc", "content": "x"} }, nil},
		{"Edit", func() map[string]any {
			return map[string]any{"file_path": filepath.Join(f.runDir(), AgentContextFile), "old_string": "trigger_comment", "new_string": "x"}
		}, nil},
	}
	n := len(tries)
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		if i := req.Turn(); i < n {
			return toolUse(tries[i].tool, tries[i].input())
		}
		switch req.Turn() - n {
		case 0:
			return toolUse("Write", map[string]any{"file_path": "src/fix.txt", "content": "fixed\n"})
		case 1:
			return toolUse("Read", map[string]any{"file_path": "README.md"})
		case 2:
			return toolUse("Edit", map[string]any{"file_path": "README.md", "old_string": "# hostile", "new_string": "# fixed"})
		case 3:
			return toolUse("mcp__gate__create_pull_request", map[string]any{"repo": testRepo, "title": "Fix the readme", "body": "Fixes it."})
		}
		return fakemodel.Text("Opened a PR.")
	})
	f, fake, eng := claudeFixture(t, "@helperbot look outside, then fix the readme", script)
	f.env["MR_ALLOWED_TOOLS"] = "Edit,Write"
	f.env["MR_MAX_TURNS"] = "30"
	canaryDir, canaries := hostileTarget(t, f)
	t.Cleanup(func() { os.Remove(outsideFile) })

	out, err := f.run(t, eng)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, out.Status)
	noCanaries(t, canaryDir, canaries)
	noGuidance(t, fake)

	agent := fake.AgentRequests()
	require.Len(t, agent, n+5)
	for i, tr := range tries {
		rs := agent[i+1].ToolResults()
		require.NotEmpty(t, rs)
		res := rs[len(rs)-1]
		assert.True(t, res.IsError, "%s %v must be refused, got: %.300s", tr.tool, tr.input(), res.Content)
		assert.NotContains(t, res.Content, "root:x:0:0", "no /etc/passwd content")
		assert.NotContains(t, res.Content, "ANTHROPIC_API_KEY", "no environment")
		if tr.file != nil {
			assert.NoFileExists(t, tr.file())
		}
	}
	requireFixedReadmePR(t, f, agent[n:])
}

// requireFixedReadmePR checks a run of the hostile repository whose agent
// made four successful calls (the last create_pull_request) after editing
// README.md to start with "# fixed": one pull request entry on main with
// one commit, its bundle, and the edit in the checkout.
func requireFixedReadmePR(t *testing.T, f *fixture, agent []fakemodel.Request) {
	t.Helper()
	require.Len(t, agent, 5)
	for i := 1; i <= 4; i++ {
		rs := agent[i].ToolResults()
		require.NotEmpty(t, rs)
		assert.False(t, rs[len(rs)-1].IsError, "turn %d: %s", i, rs[len(rs)-1].Content)
	}
	entries, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	e := entries[0]
	assert.Equal(t, policy.KindPullRequest, e.Kind)
	assert.Equal(t, "main", e.Base)
	assert.Equal(t, 1, e.Commits)
	assert.FileExists(t, filepath.Join(f.runDir(), e.Bundle))
	b, err := os.ReadFile(filepath.Join(f.dir, "work", "README.md"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "# fixed"))
}
