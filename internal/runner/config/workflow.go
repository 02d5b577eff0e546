package config

// The reusable workflow (.github/workflows/agent-run.yml) takes every
// operator setting as an input with the action's name and default; these
// lists say which action inputs it sets itself instead, and which inputs
// only it has. internal/runner/config's tests hold the workflow to them.

// WorkflowWired are action inputs agent-run.yml sets itself, between its
// jobs: file locations, assemble's outputs, and the engine executables it
// installs. They are not inputs of the reusable workflow.
var WorkflowWired = map[string]bool{
	"run-dir": true, "workspace": true, "target-dir": true,
	"context-file": true, "context-sha256": true, "log-issue": true, "log-issue-new": true, "sharded": true,
	"replay-script": true, "claude-bin": true, "codex-bin": true, "gemini-bin": true,
	"agent-result": true, "agent-stage": true,
}

// WorkflowOnlyInputs are reusable-workflow inputs that are not runner
// settings: which mention-runner to run, where, and the engine CLI and
// Node.js versions of the agent job.
var WorkflowOnlyInputs = map[string]bool{
	"runner-ref": true, "runs-on": true,
	"claude-code-version": true, "codex-version": true, "gemini-cli-version": true, "node-version": true,
}

// ModeUses reports whether a runner mode reads setting s.
func (s Setting) ModeUses(mode string) bool {
	if s.Modes == "" {
		return true
	}
	for _, m := range splitList(s.Modes) {
		if m == mode {
			return true
		}
	}
	return false
}
