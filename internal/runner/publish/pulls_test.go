package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentBundles keeps each bundle agentBundle made, by the repository, the
// commit its main branch was at and the files: every fixture's simulator is
// seeded alike, so cases that commit the same files on the same base share
// one clone, commit and capture (git processes are most of this package's
// CPU), each getting its own copy in its run dir.
var agentBundles struct {
	sync.Mutex
	made map[string]*madeBundle
}

type madeBundle struct {
	once sync.Once
	path string // the first capture, kept in a directory of the package's
	b    prbundle.Bundle
	err  error
}

// agentBundle returns a bundle of one commit adding files on repo's main
// branch, in the run dir under name, as the agent job would make it.
func (f *fixture) agentBundle(repo, name string, files map[string]string) prbundle.Bundle {
	f.t.Helper()
	owner, repoName, _ := strings.Cut(repo, "/")
	ref, _, err := f.bot.Git.GetRef(context.Background(), owner, repoName, "heads/main")
	require.NoError(f.t, err)
	paths := slices.Sorted(maps.Keys(files))
	key := repo + "\x00" + ref.GetObject().GetSHA()
	for _, p := range paths {
		key += "\x00" + p + "\x00" + files[p]
	}
	agentBundles.Lock()
	if agentBundles.made == nil {
		agentBundles.made = map[string]*madeBundle{}
	}
	m := agentBundles.made[key]
	if m == nil {
		m = &madeBundle{}
		agentBundles.made[key] = m
	}
	agentBundles.Unlock()
	m.once.Do(func() {
		dir, err := os.MkdirTemp("", "publish-bundle-")
		if err != nil {
			m.err = err
			return
		}
		bundlesMade.Store(true)
		m.path = filepath.Join(dir, "made.bundle")
		m.b, m.err = f.makeAgentBundle(repo, m.path, files)
	})
	require.NoError(f.t, m.err)
	data, err := os.ReadFile(m.path)
	require.NoError(f.t, err)
	out := filepath.Join(f.runDir, name)
	require.NoError(f.t, os.WriteFile(out, data, 0o644))
	b := m.b
	b.Path = out
	return b
}

// bundlesMade says TestMain has bundle directories to remove.
var bundlesMade atomic.Bool

func TestMain(m *testing.M) {
	code := m.Run()
	if bundlesMade.Load() {
		agentBundles.Lock()
		for _, mb := range agentBundles.made {
			if mb.path != "" {
				_ = os.RemoveAll(filepath.Dir(mb.path))
			}
		}
		agentBundles.Unlock()
	}
	os.Exit(code)
}

// makeAgentBundle clones repo from the simulator, commits files and bundles
// the commit into out.
func (f *fixture) makeAgentBundle(repo, out string, files map[string]string) (prbundle.Bundle, error) {
	dir := filepath.Join(filepath.Dir(out), "work")
	gitCmd := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Dir(dir)
		if _, err := os.Stat(dir); err == nil {
			cmd.Dir = dir
		}
		// no auto maintenance after the commit: one more process, on a
		// clone that is thrown away
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_KEY_1=gc.auto", "GIT_CONFIG_VALUE_1=0",
			"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, out)
		}
		return nil
	}
	if err := gitCmd("clone", "--quiet", f.base+repo+".git", dir); err != nil {
		return prbundle.Bundle{}, err
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			return prbundle.Bundle{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			return prbundle.Bundle{}, err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "--quiet", "-m", "agent change"}} {
		if err := gitCmd(args...); err != nil {
			return prbundle.Bundle{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return prbundle.Capture(ctx, dir, "origin/main", prbundle.Options{Out: out, AllowWorkflowChanges: true})
}

func prEntry(repo, bundle, head string) outputs.Entry {
	return outputs.Entry{Kind: policy.KindPullRequest, Repo: repo, Title: "Fix the widgets", Body: "This fixes it.",
		Base: "main", Bundle: bundle, HeadSHA: head, Commits: 1}
}

// TestPullRequestThroughFork: the bot cannot push to the target, so the
// bundle goes to its fork and the PR's head is bot:branch.
func TestPullRequestThroughFork(t *testing.T) {
	t.Parallel() // its own simulator and run dir (newFixture); git work dominates
	f := newFixture(t, "")
	// the mention is on upstream/lib, where the bot may not push
	n, err := f.sim.CreateIssue("upstream/lib", "alice", "Lib breaks", "It breaks.")
	require.NoError(t, err)
	tr, err := f.sim.Comment("upstream/lib", n, "alice", "@"+testBot+" please fix")
	require.NoError(t, err)
	f.context = f.contextFor("upstream/lib", n, tr)
	b := f.agentBundle("upstream/lib", "pr-0.bundle", map[string]string{"fix.txt": "fixed\n"})
	f.add(prEntry("upstream/lib", "pr-0.bundle", b.HeadSHA))
	res := f.run(f.options())
	require.Equal(t, "completed", res.Status, "problems: %v refused: %v", res.Problems, res.Refused)
	require.Len(t, res.Written, 1)
	w := res.Written[0]
	assert.Equal(t, testBot+"/lib", w.HeadRepo)
	branch := Branch(res.JobID, 0)
	assert.Equal(t, []string{"refs/heads/" + branch}, f.sim.Refs(testBot+"/lib", "refs/heads/mention-runner/"))
	assert.Empty(t, f.sim.Refs("upstream/lib", "refs/heads/mention-runner/"), "nothing pushed to the target")

	pr, _, err := f.bot.PullRequests.Get(context.Background(), "upstream", "lib", w.Number)
	require.NoError(t, err)
	assert.Equal(t, testBot+":"+branch, pr.GetHead().GetLabel())
	assert.Equal(t, b.HeadSHA, pr.GetHead().GetSHA())
	assert.Equal(t, "main", pr.GetBase().GetRef())
	assert.Contains(t, pr.GetBody(), "> [!NOTE]")
	assert.Equal(t, render.Tracking{PRs: []string{"upstream/lib#" + itoa(w.Number)}, Repos: []string{"upstream/lib", testBot + "/lib"}}, f.tracking())

	// a re-run reuses the PR
	res = f.run(f.options())
	require.Len(t, res.Written, 1)
	assert.True(t, res.Written[0].Existing)
	assert.Len(t, f.botIssues("upstream/lib"), 1)
}

// TestPullRequestToTarget pushes to the target itself when allowed.
func TestPullRequestToTarget(t *testing.T) {
	t.Parallel() // its own simulator and run dir (newFixture); git work dominates
	f := newFixture(t, "")
	b := f.agentBundle(testTarget, "pr-0.bundle", map[string]string{"a.go": "package a\n"})
	f.add(prEntry(testTarget, "pr-0.bundle", b.HeadSHA))
	o := f.options()
	o.Git.AllowPushToTarget = true
	res := f.run(o)
	require.Equal(t, "completed", res.Status, "problems: %v refused: %v", res.Problems, res.Refused)
	assert.Equal(t, []string{"refs/heads/" + Branch(res.JobID, 0)}, f.sim.Refs(testTarget, "refs/heads/mention-runner/"))
	is := f.botIssues(testTarget)
	require.Len(t, is, 1)
	assert.True(t, is[0].IsPullRequest())
}

// TestPullRequestRefused: the bundle is inspected again on publish.
// TestPullRequestOnlyOnTarget: a tampered queue asking for a PR on
// another repository (the control repo, with push to target allowed) is
// refused by publish itself, not only by the gate.
func TestPullRequestOnlyOnTarget(t *testing.T) {
	t.Parallel() // its own simulator and run dir (newFixture); git work dominates
	f := newFixture(t, "")
	b := f.agentBundle(testControl, "pr-0.bundle", map[string]string{"fix.txt": "x\n"})
	f.add(prEntry(testControl, "pr-0.bundle", b.HeadSHA))
	o := f.options()
	o.Git.AllowPushToTarget = true
	res := f.run(o)
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RulePRWrongRepo, res.Refused[0].Rule)
	for _, w := range res.Written {
		assert.NotEqual(t, policy.KindPullRequest, w.Kind)
	}
	assert.Empty(t, f.sim.Refs(testControl, "refs/heads/mention-runner/"), "nothing pushed to the control repo")
}

func TestPullRequestRefused(t *testing.T) {
	t.Parallel() // its own simulator and run dir (newFixture); git work dominates
	tests := []struct {
		name  string
		files map[string]string
		tweak func(o *Options, e *outputs.Entry)
		rule  string
	}{
		{"workflow change", map[string]string{".github/workflows/ci.yml": "on: push\n"}, nil, RuleWorkflowChanges},
		{"local action change", map[string]string{".github/actions/build/action.yml": "runs: {using: node20}\n"}, nil, RuleWorkflowChanges},
		{"upper-case .github", map[string]string{".GitHub/Workflows/x.yml": "on: push\n"}, nil, RuleWorkflowChanges},
		{"too large", map[string]string{"big.txt": "x\n"}, func(o *Options, _ *outputs.Entry) { o.Git.MaxBundleBytes = 10 }, RuleBundleTooLarge},
		{"head mismatch", map[string]string{"a.txt": "a\n"}, func(_ *Options, e *outputs.Entry) { e.HeadSHA = "0123456789012345678901234567890123456789" }, RuleBundleRejected},
		{"path escape", map[string]string{"a.txt": "a\n"}, func(_ *Options, e *outputs.Entry) { e.Bundle = "../pr-0.bundle" }, RuleInvalidBundle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own simulator and run dir; git work dominates
			f := newFixture(t, "")
			b := f.agentBundle(testTarget, "pr-0.bundle", tc.files)
			e := prEntry(testTarget, "pr-0.bundle", b.HeadSHA)
			o := f.options()
			o.Git.AllowPushToTarget = true
			if tc.tweak != nil {
				tc.tweak(&o, &e)
			}
			f.add(e)
			res := f.run(o)
			require.Len(t, res.Refused, 1)
			assert.Equal(t, tc.rule, res.Refused[0].Rule)
			assert.Empty(t, f.sim.Refs(testTarget, "refs/heads/mention-runner/"))
			assert.Empty(t, f.botIssues(testTarget))
		})
	}
}

// TestPullRequestBaseFromTrustedThread: publish derives the base from the
// trusted context, not from the queue: a pull request from a same-repo
// pull request thread stacks on its head branch, one from a fork's pull
// request or an issue goes into the default branch, and a queue naming
// any other base is refused with nothing pushed.
func TestPullRequestBaseFromTrustedThread(t *testing.T) {
	t.Parallel() // its own simulator and run dir (newFixture); git work dominates
	tests := []struct {
		name      string
		pr        bool   // the thread is a pull request from head branch "feature"
		headRepo  string // the PR's head repository
		queued    string // the base the queue names
		wantBase  string // "" = refused
		wantCause string
	}{
		{"same-repo PR stacks on its branch", true, testTarget, "", "feature", ""},
		{"same-repo PR, queue names its branch", true, testTarget, "feature", "feature", ""},
		{"same-repo PR, tampered to the default branch", true, testTarget, "main", "", `go into "feature"`},
		{"fork PR goes into the default branch", true, "mallory/widgets", "", "main", ""},
		{"fork PR, tampered to the fork's branch name", true, "mallory/widgets", "feature", "", `go into "main"`},
		{"issue goes into the default branch", false, "", "main", "main", ""},
		{"issue, tampered to another branch", false, "", "feature", "", `go into "main"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own simulator and run dir; git work dominates
			f := newFixture(t, "")
			n := f.issue
			if tc.pr {
				var err error
				n, err = f.sim.CreatePR(testTarget, "alice", "Widgets", "b", "feature", "main", "")
				require.NoError(t, err)
				tr, err := f.sim.Comment(testTarget, n, "alice", "@"+testBot+" please fix")
				require.NoError(t, err)
				ref, _, err := f.bot.Git.GetRef(context.Background(), "acme", "widgets", "heads/feature")
				require.NoError(t, err)
				raw, err := json.Marshal(map[string]any{
					"repository":      map[string]any{"full_name": testTarget, "default_branch": "main"},
					"issue":           map[string]any{"number": n, "pull_request": map[string]any{"url": "x"}},
					"pull_request":    map[string]any{"number": n, "head": map[string]any{"sha": ref.GetObject().GetSHA(), "ref": "feature", "repo": map[string]any{"full_name": tc.headRepo}}},
					"trigger_comment": tr,
				})
				require.NoError(t, err)
				f.context = raw
			}
			b := f.agentBundle(testTarget, "pr-0.bundle", map[string]string{"fix.txt": "fixed\n"})
			e := prEntry(testTarget, "pr-0.bundle", b.HeadSHA)
			e.Base = tc.queued
			f.add(e)
			o := f.options()
			o.Git.AllowPushToTarget = true
			res := f.run(o)
			if tc.wantBase == "" {
				require.Len(t, res.Refused, 1, "written: %v", res.Written)
				assert.Equal(t, RulePRWrongBase, res.Refused[0].Rule)
				assert.Contains(t, res.Refused[0].Reason, tc.wantCause)
				assert.Empty(t, f.sim.Refs(testTarget, "refs/heads/mention-runner/"), "nothing pushed")
				return
			}
			require.Empty(t, res.Refused)
			require.Len(t, res.Written, 1, "problems: %v", res.Problems)
			pr, _, err := f.bot.PullRequests.Get(context.Background(), "acme", "widgets", res.Written[0].Number)
			require.NoError(t, err)
			assert.Equal(t, tc.wantBase, pr.GetBase().GetRef())
		})
	}
}
