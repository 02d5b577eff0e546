// Package actionwiring computes what the reusable workflow
// (.github/workflows/agent-run.yml) and the composite action (action.yml)
// hand the runner process of one job: the job's permissions and the
// environment of the action's run step, from the job's `with:` through the
// action's inputs and defaults. The demo and the end-to-end tests run each
// stage with the tokens this gives, so they test the wiring the workflow
// really has, not a copy of it.
package actionwiring

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Files of the repository the wiring is read from, relative to its root.
const (
	WorkflowFile = ".github/workflows/agent-run.yml"
	ActionFile   = "action.yml"
	// ActionDir is where each job checks the action out (uses: ./.mention-runner).
	ActionDir = "./.mention-runner"
	// RunStepID is the action step that runs the runner.
	RunStepID = "run"
)

// TokenEnv are the environment variables through which the runner gets a
// GitHub token.
var TokenEnv = []string{"GITHUB_TOKEN", "BOT_TOKEN"}

// Step is a workflow or action step, as far as the wiring reads it.
type Step struct {
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// Input is a workflow_call or action input.
type Input struct {
	Default  *string `yaml:"default"`
	Required bool    `yaml:"required"`
}

// Job is a job of the reusable workflow.
type Job struct {
	RunsOn      string            `yaml:"runs-on"`
	Permissions yaml.Node         `yaml:"permissions"`
	Outputs     map[string]string `yaml:"outputs"`
	Steps       []Step            `yaml:"steps"`
}

// Workflow is a reusable workflow: its workflow_call inputs and its jobs.
type Workflow struct {
	Inputs map[string]Input
	Jobs   map[string]Job
}

// ReadWorkflow reads a reusable workflow file.
func ReadWorkflow(path string) (*Workflow, error) {
	var wf struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]Input `yaml:"inputs"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
		Jobs map[string]Job `yaml:"jobs"`
	}
	if err := readYAML(path, &wf); err != nil {
		return nil, err
	}
	return &Workflow{Inputs: wf.On.WorkflowCall.Inputs, Jobs: wf.Jobs}, nil
}

// Wiring is the reusable workflow and the action, parsed.
type Wiring struct {
	wfInputs  map[string]Input
	jobs      map[string]Job
	actInputs map[string]Input
	runStep   Step
}

// Load reads the workflow and the action from the repository at root.
func Load(root string) (*Wiring, error) {
	wf, err := ReadWorkflow(filepath.Join(root, WorkflowFile))
	if err != nil {
		return nil, err
	}
	var act struct {
		Inputs map[string]Input `yaml:"inputs"`
		Runs   struct {
			Steps []Step `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := readYAML(filepath.Join(root, ActionFile), &act); err != nil {
		return nil, err
	}
	w := &Wiring{wfInputs: wf.Inputs, jobs: wf.Jobs, actInputs: act.Inputs}
	for _, s := range act.Runs.Steps {
		if s.ID == RunStepID {
			w.runStep = s
		}
	}
	if w.runStep.Env == nil {
		return nil, fmt.Errorf("%s: no step with id %q and an env", ActionFile, RunStepID)
	}
	return w, nil
}

func readYAML(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("actionwiring: %w", err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("actionwiring: %s: %w", path, err)
	}
	return nil
}

// Call is what one workflow run gives the reusable workflow's jobs.
type Call struct {
	With    map[string]string            // the caller's with: (defaults fill the rest)
	Secrets map[string]string            // secrets passed to the workflow
	GitHub  map[string]string            // the github context: token, repository, action_ref…
	Needs   map[string]map[string]string // job → its outputs
	Steps   map[string]map[string]string // step id → its outputs, in the job evaluated
}

// Permissions returns a job's permissions for GITHUB_TOKEN: scope → level
// ({} is an empty map). A job without a permissions key is an error: it
// would get the repository's default, which no job here may rely on.
func (w *Wiring) Permissions(jobName string) (map[string]string, error) {
	j, ok := w.jobs[jobName]
	if !ok {
		return nil, fmt.Errorf("actionwiring: %s has no job %q", WorkflowFile, jobName)
	}
	if j.Permissions.Kind == 0 {
		return nil, fmt.Errorf("actionwiring: job %s declares no permissions (it would get the repository default)", jobName)
	}
	perms := map[string]string{}
	if err := j.Permissions.Decode(&perms); err != nil {
		return nil, fmt.Errorf("actionwiring: job %s permissions must be scope: level: %w", jobName, err)
	}
	return perms, nil
}

// JobOf returns the job whose step runs the action in mode stage
// (assemble, fetch, agent, publish). Each mode runs in exactly one job.
func (w *Wiring) JobOf(stage string) (string, error) {
	var found []string
	for name, j := range w.jobs {
		for _, s := range j.Steps {
			if s.Uses == ActionDir && s.With["mode"] == stage {
				found = append(found, name)
			}
		}
	}
	if len(found) != 1 {
		sort.Strings(found)
		return "", fmt.Errorf("actionwiring: %s runs %s in mode %s in %d steps (jobs %v), want one", WorkflowFile, ActionDir, stage, len(found), found)
	}
	return found[0], nil
}

// Jobs lists the workflow's jobs, sorted.
func (w *Wiring) Jobs() []string {
	out := make([]string, 0, len(w.jobs))
	for name := range w.jobs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// StageEnv returns the environment the action's run step gives the runner
// in stage (the action's mode: assemble, fetch, agent, publish), in the
// job that runs it: that step's with: evaluated, the action's defaults
// added, and the run step's env evaluated with those inputs. The step's
// expressions see the job's steps' outputs as c.Steps gives them.
func (w *Wiring) StageEnv(stage string, c Call) (map[string]string, error) {
	jobName, err := w.JobOf(stage)
	if err != nil {
		return nil, err
	}
	j, wfCtx, err := w.job(jobName, c)
	if err != nil {
		return nil, err
	}
	var step Step
	for _, s := range j.Steps {
		if s.Uses == ActionDir && s.With["mode"] == stage {
			step = s
		}
	}
	with := map[string]string{}
	var errs []error
	for name, raw := range step.With {
		if _, ok := w.actInputs[name]; !ok {
			errs = append(errs, fmt.Errorf("job %s passes %s, which %s does not take", jobName, name, ActionFile))
			continue
		}
		v, err := Interpolate(raw, wfCtx)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s with %s: %w", jobName, name, err))
			continue
		}
		with[name] = v
	}
	for name, in := range w.actInputs {
		if _, ok := with[name]; ok {
			continue
		}
		switch {
		case in.Default != nil:
			with[name] = *in.Default
		case in.Required:
			errs = append(errs, fmt.Errorf("job %s does not pass required action input %s", jobName, name))
		default:
			with[name] = ""
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("actionwiring: %w", errors.Join(errs...))
	}
	actCtx := Context{"inputs": with, "github": orEmpty(c.GitHub)}
	env := map[string]string{}
	for name, raw := range w.runStep.Env {
		v, err := Interpolate(raw, actCtx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s step %s env %s: %w", ActionFile, RunStepID, name, err))
			continue
		}
		env[name] = v
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("actionwiring: %w", errors.Join(errs...))
	}
	return env, nil
}

// inputs are the workflow's inputs for call c: its with:, defaults filling the rest.
func (w *Wiring) inputs(c Call) (map[string]string, error) {
	inputs := map[string]string{}
	for name, in := range w.wfInputs {
		if v, ok := c.With[name]; ok {
			inputs[name] = v
		} else if in.Default != nil {
			inputs[name] = *in.Default
		} else if in.Required {
			return nil, fmt.Errorf("actionwiring: the call lacks required input %s", name)
		}
	}
	return inputs, nil
}

// job returns job jobName and what its expressions see for call c.
func (w *Wiring) job(jobName string, c Call) (Job, Context, error) {
	j, ok := w.jobs[jobName]
	if !ok {
		return Job{}, nil, fmt.Errorf("actionwiring: %s has no job %q", WorkflowFile, jobName)
	}
	inputs, err := w.inputs(c)
	if err != nil {
		return Job{}, nil, err
	}
	return j, c.context(inputs), nil
}

// context is what the workflow's expressions see in a job.
func (c Call) context(inputs map[string]string) Context {
	needs := map[string]any{}
	for name, outs := range c.Needs {
		needs[name] = map[string]any{"outputs": outs}
	}
	steps := map[string]any{}
	for id, outs := range c.Steps {
		steps[id] = map[string]any{"outputs": outs}
	}
	return Context{"inputs": inputs, "secrets": orEmpty(c.Secrets), "github": orEmpty(c.GitHub), "needs": needs, "steps": steps}
}

// JobValues evaluates everything a job's steps are handed — each step's
// env:, with: and run: — as the workflow writes them for call c, keyed
// "step <n> env|with <name>" or "step <n> run". A secret a job can receive
// is in one of these values.
func (w *Wiring) JobValues(jobName string, c Call) (map[string]string, error) {
	j, ctx, err := w.job(jobName, c)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var errs []error
	eval := func(key, raw string) {
		v, err := Interpolate(raw, ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s %s: %w", jobName, key, err))
			return
		}
		out[key] = v
	}
	for i, s := range j.Steps {
		for name, raw := range s.Env {
			eval(fmt.Sprintf("step %d env %s", i+1, name), raw)
		}
		for name, raw := range s.With {
			eval(fmt.Sprintf("step %d with %s", i+1, name), raw)
		}
		if s.Run != "" {
			eval(fmt.Sprintf("step %d run", i+1), s.Run)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("actionwiring: %w", errors.Join(errs...))
	}
	return out, nil
}

// Tokens returns the non-empty token variables of env as KEY=value lines,
// sorted: what a stage's process gets besides its settings.
func Tokens(env map[string]string) []string {
	var out []string
	for _, k := range TokenEnv {
		if v := strings.TrimSpace(env[k]); v != "" {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Transfer is an artifact upload or download step of a job, its name
// evaluated for one call.
type Transfer struct {
	Step      int // 1-based, in the job
	Upload    bool
	Name      string
	Overwrite bool // upload: replaces an artifact of the same name (else GitHub answers 409)
	Path      string
}

// Artifacts lists a job's upload-artifact and download-artifact steps in
// order, their names as the workflow computes them for call c.
func (w *Wiring) Artifacts(jobName string, c Call) ([]Transfer, error) {
	j, ctx, err := w.job(jobName, c)
	if err != nil {
		return nil, err
	}
	var out []Transfer
	for i, s := range j.Steps {
		action, _, _ := strings.Cut(s.Uses, "@")
		if action != "actions/upload-artifact" && action != "actions/download-artifact" {
			continue
		}
		name, err := Interpolate(s.With["name"], ctx)
		if err != nil {
			return nil, fmt.Errorf("actionwiring: job %s step %d name: %w", jobName, i+1, err)
		}
		out = append(out, Transfer{Step: i + 1, Upload: action == "actions/upload-artifact", Name: name,
			Overwrite: strings.TrimSpace(s.With["overwrite"]) == "true", Path: s.With["path"]})
	}
	return out, nil
}

// JobOutputs evaluates a job's outputs for call c (what needs.<job>.outputs
// gives the jobs after it).
func (w *Wiring) JobOutputs(jobName string, c Call) (map[string]string, error) {
	j, ctx, err := w.job(jobName, c)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, raw := range j.Outputs {
		v, err := Interpolate(raw, ctx)
		if err != nil {
			return nil, fmt.Errorf("actionwiring: job %s output %s: %w", jobName, name, err)
		}
		out[name] = v
	}
	return out, nil
}
