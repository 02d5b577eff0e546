package workflowtrust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepositoryFiles reads the real action.yml and every workflow.
func TestRepositoryFiles(t *testing.T) {
	files, err := filepath.Glob("../../../.github/workflows/*.yml")
	require.NoError(t, err)
	ex, err := filepath.Glob("../../../examples/*/.github/workflows/*.yml")
	require.NoError(t, err)
	files = append(files, ex...)
	require.NotEmpty(t, files)
	agentJobs := 0
	for _, f := range files {
		if filepath.Base(f) == "ci.yml" {
			// this project's own CI: it runs in this repository, never in a
			// control repo, so no agent job shares its cache scope
			continue
		}
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		probs, err := CheckWorkflow(f, raw)
		require.NoError(t, err)
		assert.Empty(t, probs, "%s", f)
		if strings.Contains(string(raw), "mode: agent") {
			agentJobs++
		}
	}
	assert.Equal(t, 1, agentJobs, "exactly one workflow runs the agent job")
	raw, err := os.ReadFile("../../../action.yml")
	require.NoError(t, err)
	probs, err := CheckAction("action.yml", raw)
	require.NoError(t, err)
	assert.Empty(t, probs)
}

const goodAgent = `
jobs:
  agent:
    permissions: {}
    steps:
      - uses: actions/checkout@v4
        with:
          repository: mention-runner/mention-runner
      - uses: ./.mention-runner
        env:
          ANTHROPIC_API_KEY: ${{ inputs.engine == 'claude' && secrets.ANTHROPIC_API_KEY || '' }}
          OPENAI_API_KEY: ${{ inputs.engine == 'codex' && secrets.OPENAI_API_KEY || '' }}
          GEMINI_API_KEY: ${{inputs.engine == 'gemini'  &&  secrets.GEMINI_API_KEY || ''}}
        with:
          mode: agent
`

const claudeKey = "${{ inputs.engine == 'claude' && secrets.ANTHROPIC_API_KEY || '' }}"

func TestCheckWorkflowCatches(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"good", goodAgent, ""},
		{"actions/cache in agent job", strings.Replace(goodAgent, "    steps:\n", "    steps:\n      - uses: actions/cache@v4\n        with:\n          path: x\n", 1), "only with actions/cache/restore and actions/cache/save"},
		{"restore and save before the agent", strings.Replace(goodAgent, "    steps:\n", "    steps:\n      - uses: actions/cache/restore@v4\n      - run: npm ci\n      - uses: actions/cache/save@v4\n", 1), ""},
		{"save after the agent", goodAgent + "      - uses: actions/cache/save@v4\n", "saves a cache after the agent step"},
		{"cache restore in a token job", `
jobs:
  publish:
    steps:
      - uses: actions/cache/restore@v4
      - run: x
        env:
          T: ${{ secrets.BOT_TOKEN }}
`, "no job but the agent job may save or restore a cache"},
		{"setup-go default cache", "jobs:\n  d:\n    steps:\n      - uses: actions/setup-go@v5\n", "set cache: false"},
		{"setup-node cache", "jobs:\n  d:\n    steps:\n      - uses: actions/setup-node@v4\n        with:\n          cache: npm\n", "no job may use a cache"},
		{"bot token in agent job", strings.Replace(goodAgent, "ANTHROPIC_API_KEY: "+claudeKey, "T: ${{ secrets.BOT_TOKEN }}", 1), "refers to BOT_TOKEN"},
		{"bracket secret", strings.Replace(goodAgent, "secrets.ANTHROPIC_API_KEY", "secrets['BOT_TOKEN']", 1), "refers to BOT_TOKEN"},
		{"github.token in agent job", strings.Replace(goodAgent, "mode: agent", "mode: agent\n          token: ${{ github.token }}", 1), "refers to github.token"},
		{"all secrets", strings.Replace(goodAgent, claudeKey, "${{ toJSON(secrets) }}", 1), "refers to secrets"},
		// the agent job holds a model key only when its engine runs
		{"key whatever the engine", strings.Replace(goodAgent, claudeKey, "${{ secrets.ANTHROPIC_API_KEY }}", 1), "only when engine claude runs"},
		{"key of another engine", strings.Replace(goodAgent, "'codex' && secrets.OPENAI_API_KEY", "'claude' && secrets.OPENAI_API_KEY", 1), "only when engine codex runs"},
		{"negated engine", strings.Replace(goodAgent, "inputs.engine == 'claude'", "inputs.engine != 'claude'", 1), "only when engine claude runs"},
		{"two keys in one", strings.Replace(goodAgent, claudeKey, "${{ inputs.engine == 'claude' && secrets.ANTHROPIC_API_KEY || secrets.OPENAI_API_KEY }}", 1), "ANTHROPIC_API_KEY as"},
		{"key in the job's env", strings.Replace(goodAgent, "    permissions: {}\n", "    permissions: {}\n    env:\n      K: ${{ secrets.GEMINI_API_KEY }}\n", 1), "only when engine gemini runs"},
		{"bot token in the job's env", strings.Replace(goodAgent, "    permissions: {}\n", "    permissions: {}\n    env:\n      K: ${{ secrets.BOT_TOKEN }}\n", 1), "refers to BOT_TOKEN"},
		{"key in a run script", strings.Replace(goodAgent, "    steps:\n", "    steps:\n      - run: echo ${{ secrets.OPENAI_API_KEY }}\n", 1), "only when engine codex runs"},
		{"read permissions", strings.Replace(goodAgent, "permissions: {}", "permissions:\n      contents: read", 1), "permissions: {}"},
		{"no permissions", strings.Replace(goodAgent, "    permissions: {}\n", "", 1), "permissions: {}"},
		{"checkout of the target", strings.Replace(goodAgent, "repository: mention-runner/mention-runner", "repository: ${{ needs.assemble.outputs.target_repo }}", 1), "prepare job's artifact"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs, err := CheckWorkflow("w.yml", []byte(tt.yaml))
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, probs)
				return
			}
			require.NotEmpty(t, probs)
			var all []string
			for _, p := range probs {
				all = append(all, p.String())
			}
			assert.Contains(t, strings.Join(all, "\n"), tt.want)
		})
	}
}

func TestCheckActionCatches(t *testing.T) {
	probs, err := CheckAction("a.yml", []byte("runs:\n  steps:\n    - uses: actions/cache@v4\n    - uses: actions/setup-go@v5\n      with:\n        cache: 'false'\n    - run: echo\n      env:\n        T: ${{ secrets.X }}\n"))
	require.NoError(t, err)
	require.Len(t, probs, 2)
	assert.Contains(t, probs[0].String(), "cache")
	assert.Contains(t, probs[1].String(), "refers to X")
}
