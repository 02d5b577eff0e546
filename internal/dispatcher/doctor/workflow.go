package doctor

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"
	"go.yaml.in/yaml/v3"
)

// EventTypes are the repository_dispatch types the control-repo workflow
// must list (SPEC §4).
var EventTypes = []string{"agent_small", "agent_shard"}

// reusableWorkflow is how a control-repo workflow calls the runner's jobs.
const reusableWorkflow = "mention-runner/mention-runner/.github/workflows/agent-run.yml@"

const exampleFix = "copy examples/control-repo/.github/workflows/mention-runner.yml from the mention-runner release you pin into the control repo's default branch"

// workflowFinding is the control-repo workflow that runs on dispatches.
type workflowFinding struct {
	path      string
	types     []string
	allTypes  bool              // repository_dispatch without types: runs on any event type
	uses      string            // the job's uses: when it calls agent-run.yml
	runnerRef string            // that job's with.runner-ref
	with      map[string]string // that job's with:, the values as written
}

// pinnedRef is a release tag (vX.Y.Z) or a full commit sha: what a user can
// pin to. A branch or a major tag (v1) moves behind the user's back.
var pinnedRef = regexp.MustCompile(`^(v\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?|[0-9a-f]{40})$`)

// PinnedRef reports whether ref names one fixed version.
func PinnedRef(ref string) bool { return pinnedRef.MatchString(ref) }

func (r *run) findWorkflow(ctx context.Context) {
	const name = "workflow"
	if r.repo == nil {
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
		return
	}
	owner, repo, branch := r.repo.GetOwner().GetLogin(), r.repo.GetName(), r.repo.GetDefaultBranch()
	opts := &github.RepositoryContentGetOptions{Ref: branch}
	_, dir, resp, err := r.ctl.Repositories.GetContents(ctx, owner, repo, ".github/workflows", opts)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			r.fail(name, "no .github/workflows on "+branch+" (repository_dispatch runs only workflows on the default branch)", exampleFix)
			return
		}
		r.fail(name, "listing .github/workflows failed: "+errText(err), accessFix)
		return
	}
	var found []*workflowFinding
	for _, e := range dir {
		p := e.GetPath()
		if e.GetType() != "file" || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			continue
		}
		fc, _, _, err := r.ctl.Repositories.GetContents(ctx, owner, repo, p, opts)
		if err != nil {
			r.fail(name, "reading "+p+" failed: "+errText(err), accessFix)
			return
		}
		text, err := fc.GetContent()
		if err != nil {
			r.fail(name, "decoding "+p+" failed: "+err.Error(), exampleFix)
			return
		}
		f, err := parseWorkflow(p, []byte(text))
		if err != nil {
			r.fail(name, err.Error(), "fix the YAML (GitHub does not run a workflow it cannot parse), or "+exampleFix)
			return
		}
		if f != nil {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		r.fail(name, "no workflow on "+branch+" runs on repository_dispatch", exampleFix)
		return
	}
	// Prefer the workflow that lists our types.
	slices.SortStableFunc(found, func(a, b *workflowFinding) int { return len(missingTypes(b)) - len(missingTypes(a)) })
	w := found[len(found)-1]
	r.workflow = w
	switch {
	case w.allTypes:
		r.fail(name, w.path+" runs on every repository_dispatch type",
			fmt.Sprintf("in %s write on: repository_dispatch: types: [%s], so other dispatches start nothing", w.path, strings.Join(EventTypes, ", ")))
	case len(missingTypes(w)) > 0:
		r.fail(name, fmt.Sprintf("%s listens to [%s]; missing %s", w.path, strings.Join(w.types, ", "), strings.Join(missingTypes(w), ", ")),
			fmt.Sprintf("in %s write on: repository_dispatch: types: [%s]", w.path, strings.Join(EventTypes, ", ")))
	case w.uses == "":
		r.ok(name, w.path+" runs on "+strings.Join(EventTypes, ", ")+" (does not call agent-run.yml; pinning not checked)")
	default:
		ref := strings.TrimPrefix(w.uses, reusableWorkflow)
		switch {
		case w.runnerRef != ref:
			r.fail(name, fmt.Sprintf("%s calls agent-run.yml@%s but passes runner-ref %q: its jobs would run other code than the workflow pinned", w.path, ref, w.runnerRef),
				fmt.Sprintf("in %s set with: runner-ref: %s", w.path, ref))
		case !PinnedRef(ref):
			r.fail(name, fmt.Sprintf("%s runs agent-run.yml@%s, a ref that can move", w.path, ref),
				"pin a release tag (vX.Y.Z) or a commit sha in both uses: and runner-ref:")
		default:
			r.ok(name, fmt.Sprintf("%s runs on %s, pinned to %s", w.path, strings.Join(EventTypes, ", "), ref))
		}
	}
}

func missingTypes(w *workflowFinding) []string {
	if w.allTypes {
		return nil
	}
	var out []string
	for _, t := range EventTypes {
		if !slices.Contains(w.types, t) {
			out = append(out, t)
		}
	}
	return out
}

// parseWorkflow returns what matters of a workflow that runs on
// repository_dispatch, or nil for any other workflow.
func parseWorkflow(path string, data []byte) (*workflowFinding, error) {
	var doc struct {
		On   yaml.Node `yaml:"on"`
		Jobs map[string]struct {
			Uses string         `yaml:"uses"`
			With map[string]any `yaml:"with"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid YAML: %v", path, err)
	}
	f := &workflowFinding{path: path}
	on := &doc.On
	switch on.Kind {
	case yaml.ScalarNode:
		if on.Value != "repository_dispatch" {
			return nil, nil
		}
		f.allTypes = true
	case yaml.SequenceNode:
		if !slices.ContainsFunc(on.Content, func(n *yaml.Node) bool { return n.Value == "repository_dispatch" }) {
			return nil, nil
		}
		f.allTypes = true
	case yaml.MappingNode:
		rd := mapValue(on, "repository_dispatch")
		if rd == nil {
			return nil, nil
		}
		types := mapValue(rd, "types")
		switch {
		case types == nil:
			f.allTypes = true
		case types.Kind == yaml.ScalarNode:
			f.types = []string{types.Value}
		default:
			for _, n := range types.Content {
				f.types = append(f.types, n.Value)
			}
		}
	default:
		return nil, nil
	}
	for _, j := range doc.Jobs {
		if strings.HasPrefix(j.Uses, reusableWorkflow) {
			f.uses = j.Uses
			f.runnerRef, _ = j.With["runner-ref"].(string)
			f.with = map[string]string{}
			for k, v := range j.With {
				f.with[k] = fmt.Sprint(v)
			}
			break
		}
	}
	return f, nil
}

// mapValue returns the value of key in a mapping node (nil when absent or
// when n is not a mapping).
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
