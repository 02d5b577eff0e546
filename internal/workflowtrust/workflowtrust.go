// Package workflowtrust checks the project's GitHub Actions files for the
// two ways untrusted code could reach a token: the agent job receiving a
// secret other than the model key, and a cache that the agent job can
// write being restored by a job that holds a token. The rules are simple
// on purpose — no job uses a cache at all, and the agent job's only
// expression that names a secret is the model key — so a reviewer can
// check them by eye and a test can check them on every change.
package workflowtrust

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ModelKeySecrets are the secrets an agent job may receive: the model keys
// of the engines (one per engine; engines add theirs here).
var ModelKeySecrets = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}

// Problem is one rule a file breaks.
type Problem struct {
	File, Job, Step, Rule string
}

func (p Problem) String() string {
	where := p.File
	if p.Job != "" {
		where += " job " + p.Job
	}
	if p.Step != "" {
		where += " step " + p.Step
	}
	return where + ": " + p.Rule
}

type step struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

func (s step) label(i int) string {
	switch {
	case s.Name != "":
		return s.Name
	case s.ID != "":
		return s.ID
	case s.Uses != "":
		return s.Uses
	}
	return fmt.Sprintf("#%d", i+1)
}

type job struct {
	Permissions yaml.Node `yaml:"permissions"`
	Secrets     yaml.Node `yaml:"secrets"`
	Steps       []step    `yaml:"steps"`
}

// cacheProblem reports a step that saves or restores a cache.
func cacheProblem(s step) string {
	action, _, _ := strings.Cut(strings.ToLower(s.Uses), "@")
	switch {
	case strings.HasPrefix(action, "actions/cache"):
		return "uses " + s.Uses + ": no job may save or restore a cache (the agent job can write cache entries)"
	case action == "actions/setup-go" && s.With["cache"] != "false":
		return "actions/setup-go caches by default: set cache: false"
	case strings.HasPrefix(action, "actions/setup-") && action != "actions/setup-go" && s.With["cache"] != "" && s.With["cache"] != "false":
		return s.Uses + " with cache: " + s.With["cache"] + ": no job may use a cache"
	case strings.Contains(s.Run, "actions/cache") || strings.Contains(s.Run, "ACTIONS_CACHE_URL"):
		return "a run script talks to the cache service"
	}
	return ""
}

var exprRe = regexp.MustCompile(`\$\{\{(.*?)\}\}`)
var secretRe = regexp.MustCompile(`secrets\s*\.\s*([A-Za-z0-9_]+)|secrets\s*\[\s*'([^']*)'\s*\]|github\s*\.\s*token|\bsecrets\b`)

// secretRefs lists the secrets (and github.token) expressions in text name.
func secretRefs(text string) []string {
	var out []string
	for _, e := range exprRe.FindAllStringSubmatch(text, -1) {
		for _, m := range secretRe.FindAllStringSubmatch(e[1], -1) {
			switch {
			case m[1] != "":
				out = append(out, m[1])
			case m[2] != "":
				out = append(out, m[2])
			default:
				out = append(out, strings.ReplaceAll(m[0], " ", ""))
			}
		}
	}
	return out
}

// isAgentJob reports a job that runs the agent stage of the action.
func isAgentJob(j job) bool {
	for _, s := range j.Steps {
		if strings.TrimSpace(s.With["mode"]) == "agent" {
			return true
		}
	}
	return false
}

// CheckWorkflow checks one workflow file.
func CheckWorkflow(file string, raw []byte) ([]Problem, error) {
	var wf struct {
		Jobs map[string]job `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []Problem
	names := make([]string, 0, len(wf.Jobs))
	for n := range wf.Jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	allowed := map[string]bool{}
	for _, k := range ModelKeySecrets {
		allowed[k] = true
	}
	for _, name := range names {
		j := wf.Jobs[name]
		agent := isAgentJob(j)
		for i, s := range j.Steps {
			if p := cacheProblem(s); p != "" {
				out = append(out, Problem{File: file, Job: name, Step: s.label(i), Rule: p})
			}
		}
		if !agent {
			continue
		}
		if j.Permissions.Kind != yaml.MappingNode || len(j.Permissions.Content) != 0 {
			out = append(out, Problem{File: file, Job: name, Rule: "the agent job must declare permissions: {} so its GITHUB_TOKEN can do nothing"})
		}
		if !j.Secrets.IsZero() {
			out = append(out, Problem{File: file, Job: name, Rule: "the agent job must not pass secrets on"})
		}
		b, err := yaml.Marshal(j.Steps)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, ref := range secretRefs(string(b)) {
			if !allowed[ref] {
				out = append(out, Problem{File: file, Job: name, Rule: "the agent job refers to " + ref + "; it may receive only the model key (" + strings.Join(ModelKeySecrets, ", ") + ")"})
			}
		}
		for i, s := range j.Steps {
			action, _, _ := strings.Cut(strings.ToLower(s.Uses), "@")
			if action == "actions/checkout" && !strings.EqualFold(s.With["repository"], "mention-runner/mention-runner") {
				out = append(out, Problem{File: file, Job: name, Step: s.label(i),
					Rule: "the agent job checks out " + nonEmpty(s.With["repository"], "the control repo") + "; it gets the target's code only as the fetch job's artifact"})
			}
		}
	}
	return out, nil
}

// CheckAction checks the composite action: it runs in every job, the
// agent job included, so it may use no cache.
func CheckAction(file string, raw []byte) ([]Problem, error) {
	var a struct {
		Runs struct {
			Steps []step `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []Problem
	for i, s := range a.Runs.Steps {
		if p := cacheProblem(s); p != "" {
			out = append(out, Problem{File: file, Step: s.label(i), Rule: p})
		}
		for _, ref := range secretRefs(fmt.Sprint(s.Env, s.With, s.Run)) {
			out = append(out, Problem{File: file, Step: s.label(i), Rule: "the action refers to " + ref + " itself; tokens come in through the token input only"})
		}
	}
	return out, nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
