package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
	"go.yaml.in/yaml/v3"
)

// Where the reusable workflow, the action and the engine CLIs' lockfiles
// of a pinned release are.
const (
	upstreamOwner = "mention-runner"
	upstreamRepo  = "mention-runner"
	agentRunPath  = ".github/workflows/agent-run.yml"
)

// engineCLI is an engine the agent job installs: its npm package, the
// directory of the lockfile the workflow installs from, and the workflow
// input that overrides the version.
type engineCLI struct {
	engine, name, pkg, dir, input string
}

var engineCLIs = []engineCLI{
	{"claude", "Claude Code", "@anthropic-ai/claude-code", "tools/workflow/claude-code", "claude-code-version"},
	{"codex", "Codex CLI", "@openai/codex", "tools/workflow/codex", "codex-version"},
	{"gemini", "Gemini CLI", "@google/gemini-cli", "tools/workflow/gemini-cli", "gemini-cli-version"},
}

const releasesFix = "pin a release that exists (" + upstreamOwner + "/" + upstreamRepo + "'s releases): the same tag vX.Y.Z (or commit sha) in uses: …/agent-run.yml@ and in runner-ref:"

// pinnedRelease checks that the ref the control-repo workflow pins exists
// in mention-runner's repository: a tag or commit that does not makes
// every run fail before its first step.
func (r *run) pinnedRelease(ctx context.Context) {
	const name = "pinned release exists"
	w := r.workflow
	switch {
	case w == nil:
		r.fail(name, "cannot check", "fix \"workflow\" first")
		return
	case w.uses == "":
		r.ok(name, "not checked: "+w.path+" does not call agent-run.yml")
		return
	}
	ref := strings.TrimPrefix(w.uses, reusableWorkflow)
	if !PinnedRef(ref) {
		r.fail(name, "cannot check: "+ref+" is not a release tag or commit sha", "fix \"workflow\" first")
		return
	}
	if r.cfg.GitHub == nil {
		r.fail(name, "cannot check: no BOT_TOKEN", tokenFix)
		return
	}
	c, resp, err := r.cfg.GitHub.Repositories.GetCommit(ctx, upstreamOwner, upstreamRepo, ref, nil)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity) {
			r.fail(name, fmt.Sprintf("%s pins %s, which %s/%s does not have: every run would fail to start", w.path, ref, upstreamOwner, upstreamRepo), releasesFix)
			return
		}
		r.fail(name, "GET /repos/"+upstreamOwner+"/"+upstreamRepo+"/commits/"+ref+" failed: "+errText(err), releasesFix)
		return
	}
	r.pinned = ref
	sha := c.GetSHA()
	if len(sha) > 12 {
		sha = sha[:12]
	}
	r.ok(name, ref+" (commit "+sha+")")
}

// engineVersions reports the engine CLI and the Node.js version the agent
// job of a run installs: the pinned release's agent-run.yml defaults and
// lockfiles, with what the control-repo workflow passes instead.
func (r *run) engineVersions(ctx context.Context) {
	const name = "engine and Node.js"
	if r.pinned == "" {
		r.fail(name, "cannot check", "fix \"pinned release exists\" first")
		return
	}
	defaults, err := r.agentRunDefaults(ctx)
	if err != nil {
		r.fail(name, err.Error(), releasesFix)
		return
	}
	with := r.workflow.with
	pick := func(input string) string {
		if v := strings.TrimSpace(with[input]); v != "" {
			return v
		}
		return defaults[input]
	}
	node := pick("node-version")
	engine := pick("engine")
	var parts []string
	for _, e := range engineCLIs {
		if engine != e.engine && !strings.Contains(engine, "${{") {
			continue
		}
		version, from := strings.TrimSpace(with[e.input]), "set by "+r.workflow.path
		if version == "" {
			v, err := r.lockedVersion(ctx, e)
			if err != nil {
				r.fail(name, err.Error(), releasesFix)
				return
			}
			version, from = v, e.dir+"/package.json at "+r.pinned
			if v == "" {
				version, from = defaults[e.input], "agent-run.yml at "+r.pinned
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %s %s (%s)", e.engine, e.name, version, from))
	}
	switch {
	case engine == "replay":
		parts = append(parts, "replay: no engine CLI")
	case len(parts) == 0:
		r.fail(name, "engine "+engine+" is not one of claude, codex, gemini, replay", "set with: engine: in "+r.workflow.path+" to claude, codex or gemini")
		return
	}
	if strings.Contains(engine, "${{") {
		parts = append([]string{"engine " + engine}, parts...)
	}
	if node == "" {
		node = "the runner's default"
	}
	r.ok(name, strings.Join(parts, "; ")+"; on Node.js "+node)
}

// agentRunDefaults reads the pinned agent-run.yml's workflow_call input
// defaults.
func (r *run) agentRunDefaults(ctx context.Context) (map[string]string, error) {
	text, err := r.upstreamFile(ctx, agentRunPath)
	if err != nil {
		return nil, err
	}
	var wf struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]struct {
					Default string `yaml:"default"`
				} `yaml:"inputs"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return nil, fmt.Errorf("%s at %s is not valid YAML: %v", agentRunPath, r.pinned, err)
	}
	out := map[string]string{}
	for k, in := range wf.On.WorkflowCall.Inputs {
		out[k] = in.Default
	}
	return out, nil
}

// lockedVersion is the version the pinned release's lockfile directory
// names for e's package; "" when the release has none (its agent-run.yml
// names the version itself).
func (r *run) lockedVersion(ctx context.Context, e engineCLI) (string, error) {
	text, err := r.upstreamFile(ctx, e.dir+"/package.json")
	if err != nil {
		if strings.Contains(err.Error(), "404") {
			return "", nil
		}
		return "", err
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal([]byte(text), &pj); err != nil {
		return "", fmt.Errorf("%s/package.json at %s: %v", e.dir, r.pinned, err)
	}
	return pj.Dependencies[e.pkg], nil
}

func (r *run) upstreamFile(ctx context.Context, path string) (string, error) {
	fc, _, _, err := r.cfg.GitHub.Repositories.GetContents(ctx, upstreamOwner, upstreamRepo, path, &github.RepositoryContentGetOptions{Ref: r.pinned})
	if err != nil {
		return "", fmt.Errorf("reading %s at %s from %s/%s failed: %s", path, r.pinned, upstreamOwner, upstreamRepo, errText(err))
	}
	text, err := fc.GetContent()
	if err != nil {
		return "", fmt.Errorf("decoding %s at %s: %v", path, r.pinned, err)
	}
	return text, nil
}

// schedule warns about GitHub's rule for public repositories: their
// scheduled workflows are disabled after 60 days without activity, and
// the dispatcher workflow is one.
func (r *run) schedule() {
	const name = "scheduled runs (60-day rule)"
	switch {
	case r.repo == nil:
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
	case r.repo.GetPrivate():
		r.ok(name, "private repository: GitHub keeps its scheduled workflows running")
	default:
		r.warn(name, "public repository: GitHub disables its scheduled workflows, the dispatcher's included, after 60 days without activity in it; mentions then go unanswered",
			"land a commit on the control repo's default branch at least every 60 days, or re-enable the workflow when GitHub's e-mail says it was disabled (Actions → mention-runner dispatcher → Enable workflow); a private control repo is not affected")
	}
}

// privateTargets warns that a public control repo publishes what a run in
// a private repository reads: its log issue and run artifacts are readable
// by anyone.
func (r *run) privateTargets() {
	const name = "private repositories' data"
	switch {
	case r.repo == nil:
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
	case r.repo.GetPrivate():
		r.ok(name, "private control repository: a run's log issue and artifacts are as private as the repositories it serves")
	default:
		r.warn(name, "public control repository: a mention in a private repository puts its thread, code excerpts and session on this repository's log issue and run artifacts, readable by anyone",
			"make the control repo private (Settings → General → Danger Zone → Change visibility), or keep the bot's account off private repositories")
	}
}
