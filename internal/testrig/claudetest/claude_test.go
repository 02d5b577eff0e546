package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/fakemodel"
)

// The turn limit is internal/runner/agent's TestClaudeMaxTurns: Claude Code's
// error_max_turns result before the second reply is asked for, seen
// through the runner's --max-turns and its classification (one CLI start
// instead of two). What the product's --tools list offers (the read-only
// tools and the gate's, nothing else) is internal/testrig/e2e's TestFlowClaude;
// the product never passes an empty --tools (claude.OfferedTools always
// holds the read-only tools).

// An API error (500) is internal/runner/agent's TestClaudeAPIFailure: Claude
// Code's is_error result and non-zero exit, seen through the runner.

// TestClaudeMixedSession: a gate call that succeeds (with a thinking
// block), a failing command, a gate denial, a tool the engine refuses and
// a final answer in one session (one CLI start: each costs seconds of
// CPU). The successful call shows the gate's tools are offered under
// their MCP names, the call reaches the MCP server with the model's
// arguments, the model sees its result, and the stream-json output
// decodes into the expected events; the rest is the capture
// streamjson/testdata/mixed.jsonl, which `runner render` is tested on
// (gate_success.jsonl is its first turn; the captures hold neither the
// broken server nor the Write below). The same run shows two things Claude
// Code does that the record relies on: a second MCP server that cannot
// start is reported as failed while Claude Code carries on without its
// tools, and a built-in tool outside --allowedTools (Write) is refused in
// dontAsk mode, reported as a permission denial, and does nothing (one CLI
// start carries all of it).
func TestClaudeMixedSession(t *testing.T) {
	t.Parallel()
	const prompt = "Please comment hello, then try a few things."
	var notWritten string       // in Claude Code's working directory, set below
	steps := []fakemodel.Reply{ // turns 1-3 (4 is the Write)
		fakemodel.ToolCall("toolu_ls_1", "Bash", map[string]string{"command": "ls /nonexistent-mention-runner-dir", "description": "list a missing dir"}),
		fakemodel.ToolCall("toolu_gate_3", "mcp__gate__add_comment", map[string]string{"body": "elsewhere " + GateDenyWord}),
		fakemodel.ToolCall("toolu_rm_1", "Bash", map[string]string{"command": "rm -rf /tmp/mention-runner-mixed", "description": "remove"}),
	}
	var seen string // what the model saw of the gate's first result
	script := fakemodel.Func(func(req fakemodel.Request) fakemodel.Reply {
		switch n := req.Turn(); {
		case n == 0:
			return fakemodel.Reply{Content: []fakemodel.Block{
				fakemodel.ThinkingBlock("The user wants a comment."),
				fakemodel.TextBlock("Posting the comment."),
				fakemodel.ToolUseBlock("toolu_gate_1", "mcp__gate__add_comment", map[string]string{"body": "hello from claude"}),
			}}
		case n == 1:
			seen = "saw no tool result"
			if res, ok := req.ToolResult("toolu_gate_1"); ok {
				seen = "tool ok: " + res.Content
				if res.IsError {
					seen = "tool error: " + res.Content
				}
			}
			return steps[0]
		case n <= len(steps):
			return steps[n-1]
		case n == len(steps)+1:
			return fakemodel.ToolCall("toolu_write_1", "Write", map[string]string{"file_path": notWritten, "content": "pwned"})
		}
		return fakemodel.Text(seen + "; ls failed, the comment was denied and rm was refused.")
	})
	// the gate, and a second server whose command does not exist
	withBroken := func(dir string) string {
		notWritten = filepath.Join(dir, "work", "claudetest-should-not-exist")
		p := filepath.Join(dir, "mcp.json") // written by runClaudeSpec
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var cfg map[string]map[string]any
		require.NoError(t, json.Unmarshal(b, &cfg))
		cfg["mcpServers"]["broken"] = map[string]any{"type": "stdio", "command": "/nonexistent/gate-server"}
		b, err = json.Marshal(cfg)
		require.NoError(t, err)
		p = filepath.Join(dir, "mcp-with-broken.json")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	r := runClaudeSpec(t, runSpec{name: "mixed", script: script, maxTurns: 8, prompt: prompt, mcpConfig: withBroken,
		allowed: []string{"Bash"}, extraArgs: []string{"--disallowedTools", "Bash(rm:*)"}})

	// The model was offered the gate tools under their MCP names.
	agent := r.fake.AgentRequests()
	require.Len(t, agent, 6)
	assert.True(t, agent[0].HasTool("mcp__gate__add_comment"), "tools: %v", agent[0].ToolNames())
	assert.Contains(t, agent[0].UserText(), prompt)
	assert.Empty(t, r.fake.Problems())

	// Both gate calls reached the MCP server with the model's arguments.
	require.Len(t, r.calls, 2)
	assert.Equal(t, "add_comment", r.calls[0].Tool)
	assert.JSONEq(t, `{"body":"hello from claude"}`, string(r.calls[0].Args))
	assert.Equal(t, "add_comment", r.calls[1].Tool)

	// The first succeeded and the model saw its result.
	res, ok := agent[1].ToolResult("toolu_gate_1")
	require.True(t, ok)
	assert.False(t, res.IsError)
	assert.Equal(t, "comment queued as output #1", res.Content)

	// The stream-json output decodes into the expected events.
	inits := r.kinds(session.EventInit)
	require.Len(t, inits, 1)
	assert.Contains(t, inits[0].Init.Tools, "mcp__gate__add_comment")
	assert.Contains(t, inits[0].Init.MCPServers, session.MCPServer{Name: "gate", Status: "connected"})
	uses := r.kinds(session.EventToolUse)
	require.Len(t, uses, 5)
	assert.Equal(t, "mcp__gate__add_comment", uses[0].ToolName)
	assert.Equal(t, "toolu_gate_1", uses[0].ToolCallID)
	assert.Len(t, r.kinds(session.EventThinking), 1)
	results := r.kinds(session.EventToolResult)
	require.Len(t, results, 5)
	assert.Equal(t, "toolu_gate_1", results[0].ToolCallID)
	assert.Equal(t, "comment queued as output #1", results[0].Output)
	assert.False(t, results[0].IsError)
	for _, res := range results[1:] {
		assert.True(t, res.IsError, "%s: %s", res.ToolCallID, res.Output)
	}
	final := r.result(t)
	assert.False(t, final.IsError)
	assert.Equal(t, "success", final.Subtype, "tool errors are not a run error")
	assert.Equal(t, 6, final.NumTurns)
	assert.Equal(t, "tool ok: comment queued as output #1; ls failed, the comment was denied and rm was refused.", final.Text)
	assert.Equal(t, []string{"Bash", "Write"}, final.PermissionDenials,
		"only rm and Write are refused: neither the gate's success nor its denial is an engine permission denial")
	assert.Equal(t, 0, r.res.ExitCode)
	assert.Contains(t, results[1].Output, "No such file or directory", "ls ran and failed")

	// the gate's denial: an MCP IsError result reaches the model as is_error
	res, ok = agent[3].ToolResult("toolu_gate_3")
	require.True(t, ok)
	assert.True(t, res.IsError, "the MCP IsError result must reach the model as is_error")
	assert.Contains(t, res.Content, "here-only")
	assert.Contains(t, results[2].Output, "here-only")

	// the server that cannot start: reported as failed, no tool of it
	// offered; Claude Code carried on (success, above)
	assert.Contains(t, inits[0].Init.MCPServers, session.MCPServer{Name: "broken", Status: "failed"})
	assert.NotContains(t, inits[0].Init.Tools, "mcp__broken__add_comment")
	assert.False(t, agent[0].HasTool("mcp__broken__add_comment"))

	// Write is not allowed: refused, reported (above), nothing written
	res, ok = agent[5].ToolResult("toolu_write_1")
	require.True(t, ok)
	assert.True(t, res.IsError, res.Content)
	assert.NoFileExists(t, notWritten)
}
