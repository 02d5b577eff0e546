package publish

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/outputs"
	"github.com/mention-runner/mention-runner/internal/policy"
	"github.com/mention-runner/mention-runner/internal/prbundle"
	"github.com/mention-runner/mention-runner/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentBundle clones repo from the simulator, commits files and bundles the
// commits into the run dir as the agent job would.
func (f *fixture) agentBundle(repo, name string, files map[string]string) prbundle.Bundle {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "work")
	gitCmd := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Dir(dir)
		if _, err := os.Stat(dir); err == nil {
			cmd.Dir = dir
		}
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(f.t, err, "git %v: %s", args, out)
	}
	gitCmd("clone", "--quiet", f.base+repo+".git", dir)
	for p, content := range files {
		require.NoError(f.t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(f.t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	gitCmd("add", "-A")
	gitCmd("commit", "--quiet", "-m", "agent change")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := prbundle.Capture(ctx, dir, "origin/main", prbundle.Options{Out: filepath.Join(f.runDir, name), AllowWorkflowChanges: true})
	require.NoError(f.t, err)
	return b
}

func prEntry(repo, bundle, head string) outputs.Entry {
	return outputs.Entry{Kind: policy.KindPullRequest, Repo: repo, Title: "Fix the widgets", Body: "This fixes it.",
		Base: "main", Bundle: bundle, HeadSHA: head, Commits: 1}
}

// TestPullRequestThroughFork: the bot cannot push to the target, so the
// bundle goes to its fork and the PR's head is bot:branch.
func TestPullRequestThroughFork(t *testing.T) {
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
