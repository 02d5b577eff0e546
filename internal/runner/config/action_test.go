package config

import (
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// action.yml is the user-facing face of these settings: every input must
// reach the runner as the variable Settings declares, with the same default,
// or docs/configuration.md and the action would disagree about what a run does.
func TestActionYAMLMatchesSettings(t *testing.T) {
	raw, err := os.ReadFile("../../../action.yml")
	require.NoError(t, err)
	var action struct {
		Inputs map[string]struct {
			Description string `yaml:"description"`
			Default     string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				ID  string            `yaml:"id"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &action))
	assert.Equal(t, "composite", action.Runs.Using)

	var runEnv map[string]string
	for _, s := range action.Runs.Steps {
		if s.ID == "run" {
			runEnv = s.Env
		}
	}
	require.NotNil(t, runEnv, "action.yml needs the step with id run")

	seen := map[string]bool{"mode": true, "token": true, "control-token": true, "runner-ref": true}
	for _, s := range Settings {
		if s.Input == "" {
			continue
		}
		seen[s.Input] = true
		in, ok := action.Inputs[s.Input]
		if !assert.True(t, ok, "action.yml lacks input %s", s.Input) {
			continue
		}
		assert.NotEmpty(t, in.Description, s.Input)
		assert.Equal(t, s.Default, in.Default, "default of input %s", s.Input)
		assert.Equal(t, "${{ inputs."+s.Input+" }}", runEnv[s.Env], "input %s must set %s", s.Input, s.Env)
	}
	var extra []string
	for name := range action.Inputs {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	assert.Empty(t, extra, "inputs with no runner setting")
	// the agent stage must never see a token
	assert.Contains(t, runEnv["GITHUB_TOKEN"], "inputs.mode == 'assemble'")
	assert.Contains(t, runEnv["BOT_TOKEN"], "inputs.mode == 'publish'")
}
