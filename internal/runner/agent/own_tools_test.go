package agent

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
	"github.com/mention-runner/mention-runner/internal/testrig/hangguard"
)

// outsideCanaries are files outside the checkout a model must never see
// through an engine's own tools: next to the checkout, next to the run
// directories (where outputs.jsonl and the context lie), and in the
// system's temporary directory. Their names share canaryName, their
// contents each hold a random secret.
type outsideCanaries struct {
	paths    []string
	contents []string
}

// canaryName is in every canary's file name; a listing that shows it
// reached outside the checkout.
const canaryName = "c4n4ry"

func placeCanaries(t *testing.T, f *fixture) outsideCanaries {
	t.Helper()
	var c outsideCanaries
	for _, dir := range []string{f.dir, filepath.Join(f.dir, "runs"), os.TempDir()} {
		b := make([]byte, 8)
		_, err := rand.Read(b)
		require.NoError(t, err)
		secret := "CANARY-SECRET-" + hex.EncodeToString(b)
		p := filepath.Join(dir, canaryName+"-"+hex.EncodeToString(b[:4])+".txt")
		require.NoError(t, os.WriteFile(p, []byte(secret+"\n"), 0o644))
		t.Cleanup(func() { os.Remove(p) })
		c.paths, c.contents = append(c.paths, p), append(c.contents, secret)
	}
	return c
}

// ownToolProbe is one call of an engine's own tool aimed outside the
// checkout; listing marks a call whose answer would name files (a glob, a
// directory listing), so no canary's or run's file name may appear in it.
type ownToolProbe struct {
	id, tool string
	input    map[string]any
	listing  bool
	// knows is a canary's content the call itself holds (a guess), which
	// its answer may echo
	knows string
}

// assertNothingOutside checks every probe's result as the fake model API
// received it: present, and holding no canary's content, nothing of
// /etc/passwd or outputs.jsonl, and (listings) no file name from outside
// the checkout.
func assertNothingOutside(t *testing.T, req fakemodel.Request, probes []ownToolProbe, c outsideCanaries) {
	t.Helper()
	passwd, _ := os.ReadFile("/etc/passwd")
	firstPasswd, _, _ := strings.Cut(string(passwd), "\n")
	for _, p := range probes {
		res, ok := req.ToolResult(p.id)
		if !assert.True(t, ok, "no result for %s %v", p.tool, p.input) {
			continue
		}
		what := p.tool + " " + strings.TrimSpace(string(fakemodel.ToolUseBlock("", "", p.input).Input))
		for _, s := range c.contents {
			if s == p.knows {
				continue
			}
			assert.NotContains(t, res.Content, s, "%s shows a canary outside the checkout", what)
		}
		if firstPasswd != "" {
			assert.NotContains(t, res.Content, firstPasswd, "%s shows /etc/passwd", what)
		}
		assert.NotContains(t, res.Content, `"kind"`, "%s shows outputs.jsonl", what)
		if p.listing {
			assert.NotContains(t, res.Content, canaryName, "%s lists a file outside the checkout", what)
			assert.NotContains(t, res.Content, testRunID, "%s lists the run directory", what)
			assert.NotContains(t, res.Content, "mr-agent-home-", "%s lists the engine's HOME", what)
		}
	}
}

// upTo is the relative path from dir up to the root ("../../…").
func upTo(dir string) string {
	return strings.Repeat("../", strings.Count(filepath.Clean(dir), string(filepath.Separator)))
}

// TestCodexOwnToolsConfined: the real Codex CLI (offline, against the
// fake Responses API), with the model it runs by default (the one Codex
// offers the most of its own tools to) and the pull-request tool set,
// offers none of its own tools that read or list files, and every one of
// them the model calls anyway — shell, exec_command, read_file, list_dir,
// grep_files, view_image, apply_patch (updating a file outside reads it),
// MCP resources — aimed at canaries outside the checkout, /etc/passwd,
// the run directory (outputs.jsonl) or the engine's HOME brings nothing
// of them back to the model.
func TestCodexOwnToolsConfined(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real engine CLI")
	}
	t.Parallel()
	ce := cliEngines[0]
	require.Equal(t, codex.Name, ce.name)
	f := newFixture(t, "@helperbot look around")
	c := placeCanaries(t, f)
	runs := filepath.Join(f.dir, "runs")
	outputs := filepath.Join(f.runDir(), "outputs.jsonl")
	var probes []ownToolProbe
	add := func(tool string, listing bool, input map[string]any) {
		probes = append(probes, ownToolProbe{id: "call_probe_" + strings.Repeat("x", len(probes)+1), tool: tool, input: input, listing: listing})
	}
	for _, p := range append(append([]string{}, c.paths...), "/etc/passwd", outputs) {
		add("shell", false, map[string]any{"command": []string{"cat", p}})
		add("exec_command", false, map[string]any{"cmd": "cat " + p})
		add("read_file", false, map[string]any{"file_path": p})
		add("view_image", false, map[string]any{"path": p})
		add("apply_patch", false, map[string]any{"input": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-no such line\n+x\n*** End Patch\n"})
	}
	for _, d := range []string{f.dir, runs, os.TempDir(), "~", "../..", upTo(f.dir)} {
		add("shell", true, map[string]any{"command": []string{"ls", "-laR", d}})
		add("exec_command", true, map[string]any{"cmd": "ls -laR " + d})
		add("list_dir", true, map[string]any{"dir_path": d, "depth": 3})
		add("grep_files", true, map[string]any{"pattern": "CANARY|kind|root", "path": d})
	}
	add("read_file", false, map[string]any{"file_path": "../../../../../../../../etc/passwd"})
	// apply_patch checks the lines it would replace before the sandbox
	// refuses the write: an oracle for a whole line guessed right, never
	// the file's content
	add("apply_patch", false, map[string]any{"input": "*** Begin Patch\n*** Update File: " + c.paths[0] + "\n@@\n-" + c.contents[0] + "\n+x\n*** End Patch\n"})
	probes[len(probes)-1].knows = c.contents[0]
	add("apply_patch", false, map[string]any{"input": "*** Begin Patch\n*** Update File: " + filepath.Join(f.dir, "missing.txt") + "\n@@\n-a\n+x\n*** End Patch\n"})
	add("list_mcp_resources", true, map[string]any{})
	add("read_mcp_resource", false, map[string]any{"server": contract.FilesServer, "uri": "file://" + c.paths[0]})
	add("read_mcp_resource", false, map[string]any{"server": contract.GateServer, "uri": "file://" + outputs})

	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0: // a queued write: the run directory has an outputs.jsonl to find
			return toolUse(ce.gateTool("add_comment"), map[string]any{"repo": testRepo, "number": testNumber, "body": "looking"})
		case 1:
			var calls []fakemodel.Block
			for _, p := range probes {
				calls = append(calls, fakemodel.ToolUseBlock(p.id, p.tool, p.input))
			}
			return fakemodel.Reply{Content: calls}
		}
		return fakemodel.Text("Done.")
	})
	eng, fake := ce.start(t, f, script)
	f.env["MR_MODEL"] = codex.DefaultModel // the model Codex offers the most own tools to
	f.env["MR_ALLOWED_TOOLS"] = "Edit,Write"
	f.env["MR_TIMEOUT"] = hangguard.EngineTimeout
	f.env["MR_MAX_TURNS"] = "30"

	out, err := f.run(t, eng)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, out.Status)
	require.FileExists(t, outputs, "there was something to find")
	agent := fake.AgentRequests()
	require.Len(t, agent, 3)
	t.Logf("Codex offers: %v", agent[0].ToolNames())
	// Codex's own tools: none reads or lists a file. The MCP resource
	// tools reach only the configured servers (the gate, the file tools),
	// which serve no resources; apply_patch writes nothing (read-only
	// sandbox). A tool a new Codex adds fails here until it is checked.
	var own []string
	for _, n := range agent[0].ToolNames() {
		if !strings.HasPrefix(n, "mcp__") {
			own = append(own, n)
		}
	}
	assert.ElementsMatch(t, []string{"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource",
		"request_user_input", "apply_patch", "tool_search"}, own, "Codex's own tools")
	assertNothingOutside(t, agent[2], probes, c)
	for i, p := range c.paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, c.contents[i]+"\n", string(b), "apply_patch changed nothing")
	}
}

// TestClaudeOwnToolsConfined: the real Claude Code (offline, against the
// fake Messages API), with the pull-request tool set (Edit, Write), offers
// of its own tools only Read, Grep, Edit and Write, each allowed only
// under the checkout, and never Glob (an absolute pattern such as
// "/tmp/**/outputs.jsonl" listed the run directory and /tmp). Every call
// aimed outside the checkout — Read of canaries, /etc/passwd,
// outputs.jsonl, a relative path leading up; Glob (relative and absolute
// patterns, paths up, the engine's HOME) and Grep with a path or glob
// leading out; Edit and Write of a canary; and the tools not offered
// (Bash, LS, WebFetch, NotebookRead) — brings nothing of them back to the
// model and changes nothing. Read and Grep inside the checkout work (the
// probes are not refused for another reason).
func TestClaudeOwnToolsConfined(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real engine CLI")
	}
	t.Parallel()
	var f *fixture
	var c outsideCanaries
	var probes []ownToolProbe
	add := func(tool string, listing bool, input map[string]any) {
		probes = append(probes, ownToolProbe{id: "toolu_probe_" + strings.Repeat("x", len(probes)+1), tool: tool, input: input, listing: listing})
	}
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch req.Turn() {
		case 0: // a queued write: the run directory has an outputs.jsonl to find
			return toolUse("mcp__gate__add_comment", map[string]any{"repo": testRepo, "number": testNumber, "body": "looking"})
		case 1:
			var calls []fakemodel.Block
			for _, p := range probes {
				calls = append(calls, fakemodel.ToolUseBlock(p.id, p.tool, p.input))
			}
			calls = append(calls,
				fakemodel.ToolUseBlock("toolu_inside_read", "Read", map[string]any{"file_path": filepath.Join(f.env["MR_WORKSPACE"], "README.md")}),
				fakemodel.ToolUseBlock("toolu_inside_list", "Grep", map[string]any{"pattern": ".", "output_mode": "files_with_matches"}))
			return fakemodel.Reply{Content: calls}
		}
		return fakemodel.Text("Done.")
	})
	f, fake, eng := claudeFixture(t, "@helperbot look around", script)
	c = placeCanaries(t, f)
	work := f.env["MR_WORKSPACE"]
	outputs := filepath.Join(f.runDir(), "outputs.jsonl")
	up := upTo(work)
	for _, p := range append(append([]string{}, c.paths...), "/etc/passwd", outputs) {
		add("Read", false, map[string]any{"file_path": p})
		add("Bash", false, map[string]any{"command": "cat " + p})
		add("NotebookRead", false, map[string]any{"notebook_path": p})
		add("WebFetch", false, map[string]any{"url": "file://" + p, "prompt": "show it"})
	}
	for _, p := range []string{"../runs/" + testRunID + "/outputs.jsonl", up + "etc/passwd", filepath.Join(work, "..", filepath.Base(c.paths[0]))} {
		add("Read", false, map[string]any{"file_path": p})
	}
	add("Edit", false, map[string]any{"file_path": c.paths[0], "old_string": c.contents[0], "new_string": "pwned"})
	probes[len(probes)-1].knows = c.contents[0]
	add("Write", false, map[string]any{"file_path": c.paths[1], "content": "pwned"})
	add("Write", false, map[string]any{"file_path": filepath.Join(f.dir, "pwned.txt"), "content": "pwned"})
	for _, g := range []map[string]any{
		{"pattern": "../runs/**/outputs.jsonl"},
		{"pattern": "../**/*"},
		{"pattern": "../*"},
		{"pattern": up + "etc/pass*"},
		{"pattern": "/etc/pass*"},
		{"pattern": f.dir + "/**/*"},
		{"pattern": f.dir + "/runs/**/outputs.jsonl"},
		{"pattern": os.TempDir() + "/*"},
		{"pattern": "**/*", "path": f.dir},
		{"pattern": "**/*", "path": ".."},
		{"pattern": "*", "path": os.TempDir()},
		{"pattern": "**/*", "path": "~"},
		{"pattern": "~/**/*"},
		{"pattern": "**/*", "path": "$HOME"},
	} {
		add("Glob", true, g)
	}
	for _, g := range []map[string]any{
		{"pattern": "CANARY|kind|root", "path": f.dir, "output_mode": "content"},
		{"pattern": "CANARY|kind|root", "path": "..", "output_mode": "content"},
		{"pattern": "CANARY|kind|root", "glob": "../**", "output_mode": "content"},
		{"pattern": "CANARY|kind|root", "glob": up + "etc/pass*", "output_mode": "content"},
		{"pattern": "root", "path": "/etc/passwd", "output_mode": "content"},
		{"pattern": "CANARY|kind", "path": os.TempDir(), "output_mode": "files_with_matches"},
		{"pattern": ".", "path": "~", "output_mode": "files_with_matches"},
		{"pattern": "CANARY|kind|root", "glob": f.dir + "/**", "output_mode": "content"},
		{"pattern": "root", "glob": "/etc/passwd", "output_mode": "content"},
	} {
		add("Grep", true, g)
	}
	add("LS", true, map[string]any{"path": f.dir})
	add("Bash", true, map[string]any{"command": "ls -laR " + f.dir})
	f.env["MR_ALLOWED_TOOLS"] = "Edit,Write"
	f.env["MR_MAX_TURNS"] = "30"

	out, err := f.run(t, eng)
	require.NoError(t, err)
	assert.Equal(t, contract.StatusCompleted, out.Status)
	require.FileExists(t, outputs, "there was something to find")
	agent := fake.AgentRequests()
	require.Len(t, agent, 3)
	var own []string
	for _, n := range agent[0].ToolNames() {
		if !strings.HasPrefix(n, "mcp__") {
			own = append(own, n)
		}
	}
	t.Logf("Claude Code offers: %v", own)
	assert.ElementsMatch(t, []string{"Read", "Grep", "Edit", "Write"}, own, "Claude Code's own tools")
	assertNothingOutside(t, agent[2], probes, c)
	for _, p := range probes {
		if _, ok := p.input["glob"]; ok && p.tool == "Grep" {
			continue // ripgrep's --glob filters below the search path: no match, no error
		}
		res, _ := agent[2].ToolResult(p.id)
		assert.True(t, res.IsError, "%s %v is refused: %.300s", p.tool, p.input, res.Content)
	}
	read, ok := agent[2].ToolResult("toolu_inside_read")
	require.True(t, ok)
	assert.Contains(t, read.Content, "# hello", "Read works inside the checkout")
	list, ok := agent[2].ToolResult("toolu_inside_list")
	require.True(t, ok)
	assert.Contains(t, list.Content, "README.md", "Grep lists the checkout")
	for i, p := range c.paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, c.contents[i]+"\n", string(b), "nothing outside the checkout changed")
	}
	assert.NoFileExists(t, filepath.Join(f.dir, "pwned.txt"))
}
