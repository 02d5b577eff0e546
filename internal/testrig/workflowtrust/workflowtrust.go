// Package workflowtrust checks the project's GitHub Actions files for the
// two ways untrusted code could reach a token: the agent job receiving a
// secret other than the selected engine's model key, and a cache that the
// agent job can write being restored by a job that holds a token. The
// rules are simple on purpose — no job but the agent job uses a cache; the
// agent job restores and saves one only with actions/cache/restore and
// actions/cache/save, the save before the agent step (actions/cache would
// save after it, what the agent left); and the agent job names a secret
// only as keyExpr: an engine's model key, when that engine is the run's —
// so a reviewer can check them by eye and a test can check them on every
// change.
package workflowtrust

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// ModelKeySecrets are the secrets an agent job may receive: the model keys
// of the engines (contract.EngineModelKeys), each only when its engine is
// the one selected (see keyExpr).
var ModelKeySecrets = contract.ModelKeys()

// keyExpr is the one expression through which the agent job may refer to
// the model key secret of engine: the key when the run's engine is that
// engine, else nothing. A key the job gets whatever the engine would put
// every engine's key into every run's environment.
func keyExpr(engine, secret string) string {
	return "inputs.engine == '" + engine + "' && secrets." + secret + " || ''"
}

// engineOfKey maps a model key secret back to its engine.
func engineOfKey(secret string) string {
	for e, k := range contract.EngineModelKeys {
		if k == secret {
			return e
		}
	}
	return ""
}

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

// cacheProblem reports a step that saves or restores a cache, which no
// job may do but the agent job (agent), and that only as agentCache allows.
func cacheProblem(s step, agent bool) string {
	action, _, _ := strings.Cut(strings.ToLower(s.Uses), "@")
	switch {
	case agent && (action == "actions/cache/restore" || action == "actions/cache/save"):
		return ""
	case strings.HasPrefix(action, "actions/cache") && agent:
		return "uses " + s.Uses + ": the agent job restores and saves a cache only with actions/cache/restore and actions/cache/save (actions/cache saves after the agent ran)"
	case strings.HasPrefix(action, "actions/cache"):
		return "uses " + s.Uses + ": no job but the agent job may save or restore a cache (the agent job can write cache entries)"
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
func CheckWorkflow(file string, src []byte) ([]Problem, error) {
	var wf struct {
		Jobs map[string]job `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(src, &wf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var raw struct {
		Jobs map[string]yaml.Node `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(src, &raw); err != nil {
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
		agentStep := -1
		for i, s := range j.Steps {
			if strings.TrimSpace(s.With["mode"]) == "agent" {
				agentStep = i
			}
		}
		for i, s := range j.Steps {
			if p := cacheProblem(s, agent); p != "" {
				out = append(out, Problem{File: file, Job: name, Step: s.label(i), Rule: p})
			}
			action, _, _ := strings.Cut(strings.ToLower(s.Uses), "@")
			if agent && action == "actions/cache/save" && i > agentStep {
				out = append(out, Problem{File: file, Job: name, Step: s.label(i), Rule: "the agent job saves a cache after the agent step: it would store what the agent left"})
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
		// every value of the job (its env, container and services too,
		// not only the steps), as written
		var values []string
		jn := raw.Jobs[name]
		for _, v := range scalars(&jn) {
			values = append(values, exprRe.FindAllString(v, -1)...)
		}
		for _, e := range exprRe.FindAllStringSubmatch(strings.Join(values, "\n"), -1) {
			for _, ref := range secretRefs(e[0]) {
				if !allowed[ref] {
					out = append(out, Problem{File: file, Job: name, Rule: "the agent job refers to " + ref + "; it may receive only the selected engine's model key (" + strings.Join(ModelKeySecrets, ", ") + ")"})
					continue
				}
				eng := engineOfKey(ref)
				if want := keyExpr(eng, ref); strings.Join(strings.Fields(e[1]), " ") != want {
					out = append(out, Problem{File: file, Job: name, Rule: "the agent job refers to " + ref + " as ${{" + e[1] + "}}; it may hold it only when engine " + eng + " runs: write ${{ " + want + " }}"})
				}
			}
		}
		for i, s := range j.Steps {
			action, _, _ := strings.Cut(strings.ToLower(s.Uses), "@")
			if action == "actions/checkout" && !strings.EqualFold(s.With["repository"], "mention-runner/mention-runner") {
				out = append(out, Problem{File: file, Job: name, Step: s.label(i),
					Rule: "the agent job checks out " + nonEmpty(s.With["repository"], "the control repo") + "; it gets the target's code only as the prepare job's artifact"})
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
		if p := cacheProblem(s, false); p != "" {
			out = append(out, Problem{File: file, Step: s.label(i), Rule: p})
		}
		for _, ref := range secretRefs(fmt.Sprint(s.Env, s.With, s.Run)) {
			out = append(out, Problem{File: file, Step: s.label(i), Rule: "the action refers to " + ref + " itself; tokens come in through the token input only"})
		}
	}
	return out, nil
}

// scalars lists the scalar values under n, in document order.
func scalars(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, scalars(c)...)
	}
	return out
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
