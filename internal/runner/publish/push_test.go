package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// pushBundle is the bundle the gate makes for push_to_pull_request: the
// files changed on a clone of repo's branch, squashed into one commit on
// top of the branch's head; it is written to the run dir for output index.
func (f *fixture) pushBundle(repo, branch string, index int, files map[string]string) prbundle.Bundle {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "work")
	gitCmd := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Dir(dir)
		if _, err := os.Stat(dir); err == nil {
			cmd.Dir = dir
		}
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(f.t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	gitCmd("clone", "--quiet", "--branch", branch, f.base+repo+".git", dir)
	start := gitCmd("rev-parse", "HEAD")
	for p, content := range files {
		require.NoError(f.t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(f.t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	gitCmd("add", "-A")
	gitCmd("commit", "--quiet", "-m", "agent change")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := prbundle.CaptureSquash(ctx, prbundle.Repo{WorkTree: dir}, start, prbundle.BotIdentity(testBot),
		outputs.PushMessage("Fix the widgets", f.jobID(), index),
		prbundle.Options{Out: filepath.Join(f.runDir, contract.BundleFile(index)), AllowWorkflowChanges: true})
	require.NoError(f.t, err)
	return b
}

func pushEntry(pr, index int, b prbundle.Bundle) outputs.Entry {
	return outputs.Entry{Kind: policy.KindPush, Repo: testTarget, Number: pr, Title: "Fix the widgets",
		Bundle: contract.BundleFile(index), HeadSHA: b.HeadSHA, Commits: b.Commits}
}

func (f *fixture) pushOptions() Options {
	o := f.labelOptions()
	o.Ceilings.AllowPush = true
	return o
}

// branchSHA is where repo's branch points now.
func (f *fixture) branchSHA(repo, branch string) string {
	f.t.Helper()
	r, _, err := f.bot.Git.GetRef(context.Background(), owner2(repo), name2(repo), "heads/"+branch)
	require.NoError(f.t, err)
	return r.GetObject().GetSHA()
}

// moveBranch adds someone else's commit on repo's branch.
func (f *fixture) moveBranch(repo, branch string) string {
	f.t.Helper()
	ctx := context.Background()
	o, n := owner2(repo), name2(repo)
	head := f.branchSHA(repo, branch)
	c, _, err := f.bot.Git.GetCommit(ctx, o, n, head)
	require.NoError(f.t, err)
	tree, _, err := f.bot.Git.CreateTree(ctx, o, n, c.GetTree().GetSHA(), []*github.TreeEntry{
		{Path: github.String("other.txt"), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String("someone else\n")}})
	require.NoError(f.t, err)
	nc, _, err := f.bot.Git.CreateCommit(ctx, o, n, &github.Commit{Message: github.String("someone else's change"), Tree: tree,
		Parents: []*github.Commit{{SHA: github.String(head)}}}, nil)
	require.NoError(f.t, err)
	_, _, err = f.bot.Git.UpdateRef(ctx, o, n, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: nc.SHA}}, false)
	require.NoError(f.t, err)
	return nc.GetSHA()
}

// TestPublishPush: the one commit lands on the pull request's branch on
// top of the recorded head, by the bot, with the marker; the log issue
// lists it; a re-run finds it and writes nothing.
func TestPublishPush(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	head := f.branchSHA(testTarget, "feature")
	b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n", "README.md": "# widgets, fixed\n"})
	f.add(pushEntry(pr, 0, b))
	res := f.run(f.pushOptions())
	require.Empty(t, res.Refused)
	require.Len(t, res.Written, 1)
	w := res.Written[0]
	assert.Equal(t, policy.KindPush, w.Kind)
	assert.False(t, w.Existing)
	tip := f.branchSHA(testTarget, "feature")
	assert.Equal(t, tip, w.SHA)
	c, _, err := f.bot.Git.GetCommit(context.Background(), "acme", "widgets", tip)
	require.NoError(t, err)
	require.Len(t, c.Parents, 1)
	assert.Equal(t, head, c.Parents[0].GetSHA(), "one commit on top of the recorded head")
	assert.Contains(t, c.GetMessage(), contract.OutputMarker(f.jobID(), 0))
	assert.Equal(t, prbundle.BotIdentity(testBot).Email, c.GetAuthor().GetEmail())
	assert.Equal(t, prbundle.BotIdentity(testBot).Email, c.GetCommitter().GetEmail())
	assert.Equal(t, []string{fmt.Sprintf("%s@%s (%s#%d)", testTarget, tip[:12], testTarget, pr)}, f.tracking().Pushed)

	res = f.run(f.pushOptions())
	require.Len(t, res.Written, 1)
	assert.True(t, res.Written[0].Existing, "the re-run finds the commit by its marker")
	assert.Equal(t, tip, f.branchSHA(testTarget, "feature"))
}

// TestPushBranchMovedRefused: the branch moves between the gate (the
// bundle) and publish: nothing is pushed, and the requester is told to
// mention the bot again.
func TestPushBranchMovedRefused(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n"})
	f.add(pushEntry(pr, 0, b))
	moved := f.moveBranch(testTarget, "feature")
	res := f.run(f.pushOptions())
	require.Empty(t, pushes(res), "nothing pushed")
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RuleBranchMoved, res.Refused[0].Rule)
	assert.Contains(t, res.Refused[0].Reason, "mention the bot again")
	assert.Equal(t, moved, f.branchSHA(testTarget, "feature"), "the other commit stays; nothing forced")
	assert.Contains(t, f.log().GetBody(), "mention the bot again")
	var notice string
	for _, c := range f.botComments(testTarget, pr) {
		notice += c.GetBody()
	}
	assert.Contains(t, notice, "mention the bot again", "the requester is told on the thread")
}

// TestPushRaceAtRefUpdate: the branch moves after publish read it and
// made its commit, before its ref update: GitHub's non-forced update is
// not a fast-forward and fails; publish refuses and the other commit stays.
func TestPushRaceAtRefUpdate(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n"})
	f.add(pushEntry(pr, 0, b))
	moved := ""
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/git/commits") && moved == "" {
			moved = f.moveBranch(testTarget, "feature")
		}
		return resp, err
	})
	racing, err := github.NewClient(&http.Client{Transport: rt}).WithAuthToken(testToken).WithEnterpriseURLs(f.base, f.base)
	require.NoError(t, err)
	racing.BaseURL = f.bot.BaseURL
	o := f.pushOptions()
	o.Bot = racing
	res := f.run(o)
	require.NotEmpty(t, moved, "the branch moved during publish")
	require.Empty(t, pushes(res), "nothing pushed")
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RuleBranchMoved, res.Refused[0].Rule)
	assert.Contains(t, res.Refused[0].Reason, "mention the bot again")
	assert.Equal(t, moved, f.branchSHA(testTarget, "feature"))
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestPushWorkflowChangesRefused: a push touching .github/workflows/ is
// refused unless the operator allows workflow edits.
func TestPushWorkflowChangesRefused(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprint(allow), func(t *testing.T) {
			f := newFixture(t, "")
			pr := f.withPR("")
			head := f.branchSHA(testTarget, "feature")
			b := f.pushBundle(testTarget, "feature", 0, map[string]string{".github/workflows/ci.yml": "on: push\n"})
			f.add(pushEntry(pr, 0, b))
			o := f.pushOptions()
			o.Git.AllowWorkflowChanges = allow
			res := f.run(o)
			if allow {
				require.Len(t, res.Written, 1)
				return
			}
			require.Len(t, res.Refused, 1)
			assert.Equal(t, RuleWorkflowChanges, res.Refused[0].Rule)
			assert.Equal(t, head, f.branchSHA(testTarget, "feature"))
		})
	}
}

// TestPushPolicyRefusals: a push to a pull request in another repository,
// under no-pr, comment-only, here-only, with allow-push off, and onto a
// thread other than the mention's.
func TestPushPolicyRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		allow     bool
		entry     func(e outputs.Entry) outputs.Entry
		rule      string
	}{
		{name: "other repository", allow: true, entry: func(e outputs.Entry) outputs.Entry { e.Repo = testOther; return e }, rule: RulePRWrongRepo},
		{name: "no-pr", cfg: "no-pr", allow: true, rule: policy.RulePRLimit},
		{name: "comment-only", cfg: "comment-only", allow: true, rule: policy.RuleCommentOnly},
		{name: "here-only", cfg: "here-only", allow: true, rule: policy.RuleHereOnly},
		{name: "allow-push off", allow: false, rule: policy.RuleAllowPush},
		{name: "another pull request", allow: true, entry: func(e outputs.Entry) outputs.Entry { e.Number++; return e }, rule: policy.RuleNotHere},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			pr := f.withPR(tc.cfg)
			head := f.branchSHA(testTarget, "feature")
			b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n"})
			e := pushEntry(pr, 0, b)
			if tc.entry != nil {
				e = tc.entry(e)
			}
			f.add(e)
			o := f.pushOptions()
			o.Ceilings.AllowPush = tc.allow
			res := f.run(o)
			require.Empty(t, pushes(res), "nothing pushed")
			require.Len(t, res.Refused, 1)
			assert.Equal(t, tc.rule, res.Refused[0].Rule, res.Refused[0].Reason)
			assert.Equal(t, head, f.branchSHA(testTarget, "feature"))
		})
	}
}

// TestPushForkWithoutMaintainerEdits: a fork's pull request that does not
// allow maintainer edits is refused; one that does gets the commit on the
// fork's branch.
func TestPushForkWithoutMaintainerEdits(t *testing.T) {
	for _, canModify := range []bool{false, true} {
		t.Run(fmt.Sprint(canModify), func(t *testing.T) {
			f := newFixture(t, "")
			const fork = "alice/widgets"
			_, err := f.sim.AddRepo(fork, false)
			require.NoError(t, err)
			// the bot has no role on the fork: a maintainer edit lets a
			// writer of the base repository push to its branch
			pr, err := f.sim.CreateForkPR(testTarget, fork, "alice", "Fix from a fork", "main", "main", canModify)
			require.NoError(t, err)
			f.trigger, err = f.sim.Comment(testTarget, pr, "alice", "@"+testBot+" fix it in this PR")
			require.NoError(t, err)
			head := f.branchSHA(fork, "main")
			f.context = f.prContext(pr, head, "main", fork)
			b := f.pushBundle(fork, "main", 0, map[string]string{"fix.txt": "fixed\n"})
			f.add(pushEntry(pr, 0, b))
			res := f.run(f.pushOptions())
			if !canModify {
				require.Len(t, res.Refused, 1)
				assert.Equal(t, RulePushFork, res.Refused[0].Rule)
				assert.Equal(t, head, f.branchSHA(fork, "main"))
				return
			}
			require.Empty(t, res.Refused)
			require.Len(t, res.Written, 1)
			assert.Equal(t, fork, res.Written[0].HeadRepo)
			assert.Equal(t, res.Written[0].SHA, f.branchSHA(fork, "main"))
		})
	}
}

// prContext is the trusted context of a mention on pull request pr whose
// head is headRepo:ref at head.
func (f *fixture) prContext(pr int, head, ref, headRepo string) []byte {
	return mustJSON(f.t, map[string]any{
		"repository": map[string]any{"full_name": testTarget, "default_branch": "main"},
		"issue":      map[string]any{"number": pr, "pull_request": map[string]any{"url": "x"}},
		"pull_request": map[string]any{"number": pr,
			"head": map[string]any{"sha": head, "ref": ref, "repo": map[string]any{"full_name": headRepo}},
			"base": map[string]any{"ref": "main"}},
		"trigger_comment": f.trigger,
	})
}

// TestPushProtectedBranch: GitHub refuses the ref update of a protected
// branch; publish refuses the push, naming it.
func TestPushProtectedBranch(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	head := f.branchSHA(testTarget, "feature")
	f.sim.ProtectBranch(testTarget, "feature")
	b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n"})
	f.add(pushEntry(pr, 0, b))
	res := f.run(f.pushOptions())
	require.Empty(t, pushes(res), "nothing pushed")
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RulePushRefused, res.Refused[0].Rule)
	assert.Contains(t, res.Refused[0].Reason, "Protected branch")
	assert.Equal(t, head, f.branchSHA(testTarget, "feature"))
}

// TestPushQueuedTwice: the same push queued twice lands once; the second
// finds the branch moved (by the first) and is refused.
func TestPushQueuedTwice(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	files := map[string]string{"src/fix.go": "package src\n"}
	b0 := f.pushBundle(testTarget, "feature", 0, files)
	b1 := f.pushBundle(testTarget, "feature", 1, files)
	f.add(pushEntry(pr, 0, b0))
	f.add(pushEntry(pr, 1, b1))
	o := f.pushOptions()
	o.Ceilings.PRLimit = 2
	res := f.run(o)
	require.Len(t, res.Written, 1)
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RuleBranchMoved, res.Refused[0].Rule)
	c, _, err := f.bot.Git.GetCommit(context.Background(), "acme", "widgets", f.branchSHA(testTarget, "feature"))
	require.NoError(t, err)
	assert.Contains(t, c.GetMessage(), contract.OutputMarker(f.jobID(), 0), "the first push is the tip")
}

// TestPushRefApplyThenFail: each write of a push (tree, commit, ref
// update) is applied and its answer lost (502, reset, hang): publish reads
// the ref back or finds its commit by the marker; one commit lands,
// nothing doubled, nothing lost.
func TestPushRefApplyThenFail(t *testing.T) {
	kinds := []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang}
	for _, ep := range []struct{ method, path string }{
		{"POST", "/repos/acme/widgets/git/trees"},
		{"POST", "/repos/acme/widgets/git/commits"},
		{"PATCH", "/repos/acme/widgets/git/refs/*"},
	} {
		for _, kind := range kinds {
			t.Run(ep.method+" "+ep.path+" "+string(kind), func(t *testing.T) {
				f := newFixture(t, "")
				pr := f.withPR("")
				head := f.branchSHA(testTarget, "feature")
				b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n"})
				f.add(pushEntry(pr, 0, b))
				f.sim.AddFault(githubsim.Fault{Method: ep.method, Path: ep.path, Kind: kind, Delay: 5 * time.Millisecond, AfterApply: true, OnCall: 1})
				res := f.run(f.pushOptions())
				assert.Empty(t, res.Refused)
				require.Len(t, res.Written, 1)
				tip := f.branchSHA(testTarget, "feature")
				assert.Equal(t, tip, res.Written[0].SHA)
				c, _, err := f.bot.Git.GetCommit(context.Background(), "acme", "widgets", tip)
				require.NoError(t, err)
				require.Len(t, c.Parents, 1)
				assert.Equal(t, head, c.Parents[0].GetSHA(), "one commit on the recorded head, not two")
				patches := 0
				for _, r := range f.sim.Requests() {
					if r.Method == "PATCH" && strings.Contains(r.Path, "/git/refs/") && r.Status == 200 {
						patches++
					}
				}
				assert.LessOrEqual(t, patches, 1)
			})
		}
	}
}

// TestPushWrites counts the GitHub writes one push of text files costs:
// a tree, a commit and the ref update.
func TestPushWrites(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	b := f.pushBundle(testTarget, "feature", 0, map[string]string{"src/fix.go": "package src\n", "README.md": "# fixed\n"})
	f.add(pushEntry(pr, 0, b))
	before := len(f.sim.Requests())
	res := f.run(f.pushOptions())
	require.Len(t, res.Written, 1)
	var writes []string
	for _, r := range f.sim.Requests()[before:] {
		if r.Method != "GET" && strings.Contains(r.Path, "/repos/acme/widgets/") {
			writes = append(writes, r.Method+" "+r.Path)
		}
	}
	assert.Equal(t, []string{"POST /repos/acme/widgets/git/trees", "POST /repos/acme/widgets/git/commits", "PATCH /repos/acme/widgets/git/refs/heads/feature"}, writes[:3])
	t.Logf("writes on the target: %v", writes)
}

// pushes are the pushes among res's writes (a refused run also writes its
// notice on the thread).
func pushes(res *Result) []Written {
	var out []Written
	for _, w := range res.Written {
		if w.Kind == policy.KindPush {
			out = append(out, w)
		}
	}
	return out
}

// TestPushSpecialEntryRefused: a forged push bundle (no gate) changing a
// symlink or a submodule entry is refused by publish's own inspection, the
// same as a pull request's, and the branch is not moved.
func TestPushSpecialEntryRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(git func(...string) string, dir string)
	}{
		{"symlink", func(git func(...string) string, dir string) {
			require.NoError(t, os.Symlink("/proc/self/environ", filepath.Join(dir, "env")))
			git("add", "env")
		}},
		{"submodule", func(git func(...string) string, dir string) {
			git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",vendor/evil")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			pr := f.withPR("")
			head := f.branchSHA(testTarget, "feature")
			sha := f.forgeBundle(testTarget, contract.BundleFile(0), tc.change)
			f.add(outputs.Entry{Kind: policy.KindPush, Repo: testTarget, Number: pr, Title: "Fix the widgets",
				Bundle: contract.BundleFile(0), HeadSHA: sha, Commits: 1})
			res := f.run(f.pushOptions())
			require.Empty(t, pushes(res))
			require.Len(t, res.Refused, 1)
			assert.Equal(t, RuleSpecialEntry, res.Refused[0].Rule, res.Refused[0].Reason)
			assert.Equal(t, head, f.branchSHA(testTarget, "feature"))
		})
	}
}
