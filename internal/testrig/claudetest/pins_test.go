package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestWorkflowInstallsThePinnedCLIs: the agent job installs the same
// engine CLI versions the tests run (tools/<cli>/package.json).
func TestWorkflowInstallsThePinnedCLIs(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := moduleRoot(wd)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "agent-run.yml"))
	require.NoError(t, err)
	var wf struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]struct{ Default string }
			} `yaml:"workflow_call"`
		} `yaml:"on"`
	}
	require.NoError(t, yaml.Unmarshal(b, &wf))
	tests := []struct{ dir, pkg, input string }{
		{"claude-code", "@anthropic-ai/claude-code", "claude-code-version"},
		{"codex", "@openai/codex", "codex-version"},
		{"gemini-cli", "@google/gemini-cli", "gemini-cli-version"},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root, "tools", tc.dir, "package.json"))
			require.NoError(t, err)
			var pj struct{ Dependencies map[string]string }
			require.NoError(t, json.Unmarshal(b, &pj))
			pinned := pj.Dependencies[tc.pkg]
			require.Regexp(t, `^\d+\.\d+\.\d+$`, pinned, "an exact version, not a range")
			in, ok := wf.On.WorkflowCall.Inputs[tc.input]
			require.True(t, ok, "agent-run.yml has no input %s", tc.input)
			assert.Equal(t, pinned, in.Default)
		})
	}
}
