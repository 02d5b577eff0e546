package config

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/actionwiring"
)

type (
	workflowInput = actionwiring.Input
	workflowJob   = actionwiring.Job
)

func readAgentRun(t *testing.T) (map[string]workflowInput, map[string]workflowJob) {
	t.Helper()
	wf, err := actionwiring.ReadWorkflow("../../../" + actionwiring.WorkflowFile)
	require.NoError(t, err)
	require.NotEmpty(t, wf.Inputs)
	return wf.Inputs, wf.Jobs
}

// TestReusableWorkflowTakesEverySetting: every runner setting an operator
// sets (docs/configuration.md's settings table and action.yml list the same, by the tests
// beside this one) is an input of agent-run.yml with the same default, and
// every job whose runner mode reads it passes it on to the action.
func TestReusableWorkflowTakesEverySetting(t *testing.T) {
	inputs, jobs := readAgentRun(t)
	operator := map[string]bool{}
	for _, s := range Settings {
		if s.Input == "" || WorkflowWired[s.Input] {
			continue
		}
		operator[s.Input] = true
		in, ok := inputs[s.Input]
		if !assert.True(t, ok, "agent-run.yml lacks input %s (%s)", s.Input, s.Env) {
			continue
		}
		got := ""
		if in.Default != nil {
			got = *in.Default
		}
		assert.Equal(t, s.Default, got, "default of agent-run.yml input %s", s.Input)
		assert.Equal(t, s.Input == "bot-login", in.Required, "only bot-login is required: %s", s.Input)
	}
	var extra []string
	for name := range inputs {
		if !operator[name] && !WorkflowOnlyInputs[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	assert.Empty(t, extra, "agent-run.yml inputs that are neither a runner setting nor listed in WorkflowOnlyInputs")
	ref, ok := inputs["runner-ref"]
	require.True(t, ok, "agent-run.yml needs runner-ref")
	assert.True(t, ref.Required, "runner-ref is required: nothing may default to a ref that moves")
	assert.Nil(t, ref.Default, "runner-ref has no default")
	assert.Contains(t, inputs, "runs-on")

	modes := map[string]bool{}
	for name, j := range jobs {
		assert.Equal(t, "${{ inputs.runs-on }}", j.RunsOn, "job %s runs on the runs-on input", name)
		for _, st := range j.Steps {
			if st.Uses != "./.mention-runner" {
				continue
			}
			mode := st.With["mode"]
			modes[mode] = true
			for _, s := range Settings {
				if !operator[s.Input] || !s.ModeUses(mode) {
					continue
				}
				assert.Contains(t, st.With[s.Input], "inputs."+s.Input, "job %s (mode %s) must pass %s on", name, mode, s.Input)
			}
			assert.Equal(t, "${{ inputs.runner-ref }}", st.With["runner-ref"], "job %s tells the action its ref", name)
		}
	}
	for _, m := range []string{"assemble", "fetch", "agent", "publish"} {
		assert.True(t, modes[m], "no job runs mode %s", m)
	}
}

func TestModeUses(t *testing.T) {
	assert.True(t, Setting{}.ModeUses("agent"))
	assert.True(t, Setting{Modes: "agent,publish"}.ModeUses("publish"))
	assert.False(t, Setting{Modes: "agent"}.ModeUses("publish"))
	assert.False(t, Setting{Modes: "fetch,agent"}.ModeUses("assemble"))
}

// TestPublishHearsTheAgentJobFromGitHub: publish learns the agent job's
// result and its stage output through GitHub (needs.agent), not through
// the job's files, which a full disk may have kept from being written.
func TestPublishHearsTheAgentJobFromGitHub(t *testing.T) {
	_, jobs := readAgentRun(t)
	assert.Equal(t, "${{ steps.agent.outputs."+contract.AgentStageOutput+" }}", jobs["agent"].Outputs[contract.AgentStageOutput])
	var with map[string]string
	for _, st := range jobs["publish"].Steps {
		if st.Uses == "./.mention-runner" {
			with = st.With
		}
	}
	require.NotNil(t, with, "publish runs the action")
	assert.Equal(t, "${{ needs.agent.result }}", with["agent-result"])
	assert.Equal(t, "${{ needs.agent.outputs."+contract.AgentStageOutput+" }}", with["agent-stage"])
}
