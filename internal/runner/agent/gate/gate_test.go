package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

type step struct {
	tool     string
	args     any
	decision string
	rule     string
	contains string
}

func TestDecisionsUnderPolicies(t *testing.T) {
	here := comment(hereRepo, 7, "thanks, looking")
	issue := map[string]any{"repo": hereRepo, "title": "Follow-up", "body": "details"}
	cases := []struct {
		name      string
		flags     string // "" = no flags
		blocklist []string
		ceilings  *policy.Ceilings
		steps     []step
	}{
		{name: "defaults allow comment, issue and noop", steps: []step{
			{contract.ToolAddComment, here, DecisionAllowed, "", "queued (output #0): the comment on octo/app#7 will be posted after review"},
			{contract.ToolCreateIssue, issue, DecisionAllowed, "", `queued (output #1): the issue "Follow-up" in octo/app`},
			{contract.ToolCreateIssue, issue, DecisionDenied, policy.RuleIssueLimit, "issue-limit is 1 and this run already created 1 issue"},
			{contract.ToolNoop, map[string]any{"reason": "nothing else to say"}, DecisionAllowed, "", "recorded (output #2)"},
		}},
		{name: "here-only denies create_issue and other threads", flags: "here-only", steps: []step{
			{contract.ToolCreateIssue, issue, DecisionDenied, policy.RuleHereOnly, "denied: here-only allows comments and reviews only on octo/app#7"},
			{contract.ToolAddComment, comment(hereRepo, 8, "x"), DecisionDenied, policy.RuleHereOnly, "not on octo/app#8"},
			{contract.ToolCreatePullRequest, map[string]any{"repo": hereRepo, "title": "t", "body": "b"}, DecisionDenied, policy.RuleHereOnly, "here-only"},
			{contract.ToolAddComment, here, DecisionAllowed, "", "queued (output #0)"},
		}},
		{name: "comment-limit reached", flags: "comment-limit=2", steps: []step{
			{contract.ToolAddComment, here, DecisionAllowed, "", "output #0"},
			{contract.ToolAddComment, comment("OCTO/App", 7, "same thread, other case"), DecisionAllowed, "", "output #1"},
			{contract.ToolAddComment, here, DecisionDenied, policy.RuleCommentLimit, "comment-limit is 2 and this run already wrote 2 comments on octo/app#7"},
			{contract.ToolAddComment, comment(hereRepo, 9, "another thread"), DecisionAllowed, "", "output #2"},
		}},
		{name: "blocked repo", blocklist: []string{"evil/*"}, steps: []step{
			{contract.ToolAddComment, comment("evil/x", 1, "hi"), DecisionDenied, policy.RuleRepoBlocked, `opt-out entry "evil/*"`},
			{contract.ToolCreateIssue, map[string]any{"repo": "Evil/Y", "title": "t", "body": "b"}, DecisionDenied, policy.RuleRepoBlocked, "go away"},
		}},
		{name: "repo allow and deny lists", flags: "repo=octo/app repo=octo/lib deny=octo/lib", steps: []step{
			{contract.ToolAddComment, comment("octo/lib", 1, "x"), DecisionDenied, policy.RuleRepoDenied, "deny=octo/lib"},
			{contract.ToolAddComment, comment("other/z", 1, "x"), DecisionDenied, policy.RuleRepoNotAllowed, "only to octo/app"},
		}},
		{name: "operator ceilings bound every limit", ceilings: &policy.Ceilings{CommentLimit: 1, IssueLimit: 0, PRLimit: 0, MaxWrites: 10}, steps: []step{
			{contract.ToolAddComment, here, DecisionAllowed, "", "output #0"},
			{contract.ToolAddComment, here, DecisionDenied, policy.RuleCommentLimit, "comment-limit is 1"},
			{contract.ToolCreateIssue, issue, DecisionDenied, policy.RuleIssueLimit, "no issues may be created"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig(t)
			if c.flags != "" {
				cfg = withFlags(t, cfg, c.flags)
			}
			if c.blocklist != nil {
				cfg.Blocklist = blockedList(c.blocklist...)
			}
			if c.ceilings != nil {
				cfg.Ceilings = c.ceilings
			}
			cs := connect(t, cfg)
			allowed := 0
			for i, s := range c.steps {
				text, isErr := call(t, cs, s.tool, s.args)
				assert.Equal(t, s.decision != DecisionAllowed, isErr, "step %d: %s", i, text)
				assert.Contains(t, text, s.contains, "step %d", i)
				if s.decision == DecisionDenied {
					assert.Contains(t, text, "Do not retry this call", "step %d", i)
				} else {
					allowed++
				}
			}
			recs := readLog(t, cfg)
			require.Len(t, recs, len(c.steps))
			for i, s := range c.steps {
				assert.Equal(t, s.tool, recs[i].Tool, "record %d", i)
				assert.Equal(t, s.decision, recs[i].Decision, "record %d", i)
				assert.Equal(t, s.rule, recs[i].Rule, "record %d", i)
				assert.NotContains(t, recs[i].Reason, "\n")
				assert.Equal(t, s.decision == DecisionAllowed, recs[i].OutputIndex != nil, "record %d", i)
			}
			assert.Len(t, readOutputs(t, cfg), allowed)
		})
	}
}

func TestOutputsEntries(t *testing.T) {
	cfg := baseConfig(t)
	cs := connect(t, cfg)
	body := "line one\n\n```go\nfmt.Println(1)\n```\n"
	call(t, cs, contract.ToolAddComment, comment(hereRepo, 7, body))
	call(t, cs, contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "Bug", "body": "b", "labels": []string{"bug", "p1"}})
	call(t, cs, contract.ToolNoop, map[string]any{"reason": "done"})
	es := readOutputs(t, cfg)
	require.Len(t, es, 3)
	assert.Equal(t, policy.KindComment, es[0].Kind)
	assert.Equal(t, body, es[0].Body, "bodies are stored as given")
	assert.Equal(t, 7, es[0].Number)
	assert.Equal(t, []string{"bug", "p1"}, es[1].Labels)
	assert.Equal(t, "done", es[2].Reason)
	for i, e := range es {
		assert.Equal(t, i, e.Index)
		assert.False(t, e.At.IsZero())
	}
	recs := readLog(t, cfg)
	require.Len(t, recs, 3)
	assert.Equal(t, 1, *recs[1].OutputIndex)
	assert.JSONEq(t, `{"repo":"octo/app","title":"Bug","body":"b","labels":["bug","p1"]}`, string(recs[1].Args))
}

func TestLogRedactsArgs(t *testing.T) {
	cfg := baseConfig(t)
	cs := connect(t, cfg)
	secret := "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
	call(t, cs, contract.ToolAddComment, comment(hereRepo, 7, "token:\n"+secret))
	recs := readLog(t, cfg)
	require.Len(t, recs, 1)
	assert.NotContains(t, string(recs[0].Args), secret)
	assert.Contains(t, string(recs[0].Args), "REDACTED")
	assert.Contains(t, readOutputs(t, cfg)[0].Body, secret, "outputs keep the body as given; publish redacts")
}

func TestInvalidArguments(t *testing.T) {
	long := make([]byte, contract.AgentBodyChars+1)
	for i := range long {
		long[i] = 'x'
	}
	cases := []struct {
		tool     string
		args     any
		contains string
	}{
		{contract.ToolAddComment, map[string]any{"repo": hereRepo, "number": 7}, `"body" is required`},
		{contract.ToolAddComment, comment(hereRepo, 7, "  \n "), `"body" must not be empty`},
		{contract.ToolAddComment, comment("not a repo", 7, "x"), `"repo" must be a GitHub repository as owner/name`},
		{contract.ToolAddComment, comment("octo/app/extra", 7, "x"), "owner/name"},
		{contract.ToolAddComment, comment(hereRepo, 0, "x"), `"number" must be a positive whole number`},
		{contract.ToolAddComment, map[string]any{"repo": hereRepo, "number": "seven", "body": "x"}, `"number" must be a positive whole number`},
		{contract.ToolAddComment, map[string]any{"repo": hereRepo, "number": 1.5, "body": "x"}, `"number"`},
		{contract.ToolAddComment, map[string]any{"repo": hereRepo, "number": 7, "body": string(long)}, "the limit is 60000"},
		{contract.ToolAddComment, map[string]any{"repo": hereRepo, "number": 7, "body": "x", "issue": 7}, `unknown argument "issue"; add_comment takes repo, number, body`},
		{contract.ToolAddComment, map[string]any{"repo": 5, "number": 7, "body": "x"}, `"repo" must be a string`},
		{contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "a\nb", "body": "x"}, `"title" must be a single line`},
		{contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "t", "body": "x", "labels": "bug"}, `"labels" must be a list of strings`},
		{contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "t", "body": "x", "labels": []string{""}}, "each label"},
		{contract.ToolCreatePullRequest, map[string]any{"repo": hereRepo, "title": "t", "body": "x", "base": "../etc"}, `"base" must be a branch name`},
		{contract.ToolCreatePullRequest, map[string]any{"repo": hereRepo, "title": "t", "body": "x", "draft": "yes"}, `"draft" must be true or false`},
		{contract.ToolNoop, map[string]any{}, `"reason" is required`},
	}
	for _, c := range cases {
		t.Run(c.contains, func(t *testing.T) {
			cfg := baseConfig(t)
			cs := connect(t, cfg)
			text, isErr := call(t, cs, c.tool, c.args)
			assert.True(t, isErr)
			assert.Contains(t, text, c.contains)
			assert.Contains(t, text, "invalid "+c.tool+" call")
			assert.Empty(t, readOutputs(t, cfg))
			recs := readLog(t, cfg)
			require.Len(t, recs, 1)
			assert.Equal(t, DecisionInvalid, recs[0].Decision)
			assert.Equal(t, RuleInvalidArgs, recs[0].Rule)
		})
	}
}

func TestQuotedNumberAccepted(t *testing.T) {
	cfg := baseConfig(t)
	cs := connect(t, cfg)
	_, isErr := call(t, cs, contract.ToolAddComment, map[string]any{"repo": hereRepo, "number": "#7", "body": "x"})
	assert.False(t, isErr)
	assert.Equal(t, 7, readOutputs(t, cfg)[0].Number)
}

func TestLedgerContinuesAcrossRestart(t *testing.T) {
	cfg := withFlags(t, baseConfig(t), "comment-limit=2 issue-limit=1")
	cs := connect(t, cfg)
	_, isErr := call(t, cs, contract.ToolAddComment, comment(hereRepo, 7, "one"))
	require.False(t, isErr)
	_, isErr = call(t, cs, contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "t", "body": "b"})
	require.False(t, isErr)

	// A new gate process on the same run dir: counts and numbering continue.
	cs2 := connect(t, cfg)
	text, isErr := call(t, cs2, contract.ToolAddComment, comment(hereRepo, 7, "two"))
	require.False(t, isErr, text)
	assert.Contains(t, text, "output #2")
	text, isErr = call(t, cs2, contract.ToolAddComment, comment(hereRepo, 7, "three"))
	assert.True(t, isErr)
	assert.Contains(t, text, "already wrote 2 comments")
	text, isErr = call(t, cs2, contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "t2", "body": "b"})
	assert.True(t, isErr)
	assert.Contains(t, text, "issue-limit is 1")
	assert.Len(t, readOutputs(t, cfg), 3)
}

func TestCorruptQueueStopsGate(t *testing.T) {
	cfg := baseConfig(t)
	require.NoError(t, os.WriteFile(filepath.Join(cfg.RunDir, "outputs.jsonl"), []byte(`{"index":5,"kind":"comment"}`+"\n"), 0o644))
	_, err := New(cfg)
	assert.ErrorContains(t, err, "rebuild ledger")
}

func TestConcurrentCallsTakeLastSlotOnce(t *testing.T) {
	cfg := withFlags(t, baseConfig(t), "comment-limit=3")
	cs := connect(t, cfg)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, isErr := call(t, cs, contract.ToolAddComment, comment(hereRepo, 7, fmt.Sprint("c", i)))
			mu.Lock()
			defer mu.Unlock()
			if !isErr {
				allowed++
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 3, allowed)
	assert.Len(t, readOutputs(t, cfg), 3)
	assert.Len(t, readLog(t, cfg), 12)
}

func TestToolsListed(t *testing.T) {
	cs := connect(t, baseConfig(t))
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		assert.NotEmpty(t, tl.Description)
		b, err := json.Marshal(tl.InputSchema)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"additionalProperties":false`)
	}
	assert.ElementsMatch(t, contract.GateTools, names)
	assert.Equal(t, "mcp__gate__add_comment", contract.EngineToolName(contract.ToolAddComment))
}

func TestPullRequests(t *testing.T) {
	t.Parallel()
	pr := map[string]any{"repo": hereRepo, "title": "Fix typo", "body": "Fixes the typo.", "base": "main"}
	cases := []struct {
		name     string
		setup    func(t *testing.T, work string)
		mod      func(c *Config)
		args     map[string]any
		decision string
		rule     string
		contains string
	}{
		{"no changes", nil, nil, pr, DecisionInvalid, RuleNoCommits, "edit the files in the working directory first"},
		{"edits are committed by the gate", func(t *testing.T, w string) {
			require.NoError(t, os.WriteFile(filepath.Join(w, "README.md"), []byte("fixed\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(w, "new.txt"), []byte("new\n"), 0o644))
		}, nil, pr, DecisionAllowed, "", `queued (output #0): the pull request "Fix typo" in octo/app (1 commit(s)`},
		{"edited workflow refused", func(t *testing.T, w string) {
			require.NoError(t, os.MkdirAll(filepath.Join(w, ".github", "workflows"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(w, ".github", "workflows", "x.yml"), []byte("on: push\n"), 0o644))
		}, nil, pr, DecisionDenied, RuleWorkflowChange, ".github/workflows/x.yml"},
		{"commits become a bundle", func(t *testing.T, w string) { commitFile(t, w, "README.md", "hello\n") }, nil, pr,
			DecisionAllowed, "", `queued (output #0): the pull request "Fix typo" in octo/app (1 commit(s)`},
		{"workflow change refused", func(t *testing.T, w string) { commitFile(t, w, ".github/workflows/x.yml", "on: push\n") }, nil, pr,
			DecisionDenied, RuleWorkflowChange, ".github/workflows/x.yml"},
		{"workflow change allowed by operator", func(t *testing.T, w string) { commitFile(t, w, ".github/workflows/x.yml", "on: push\n") },
			func(c *Config) { c.AllowWorkflowChanges = true }, pr, DecisionAllowed, "", "queued"},
		{"size cap", func(t *testing.T, w string) { commitFile(t, w, "big", string(make([]byte, 4096))) },
			func(c *Config) { c.MaxBundleBytes = 100 }, pr, DecisionDenied, RuleBundleTooLarge, "over the 100-byte limit"},
		{"another base than the thread's", func(t *testing.T, w string) { commitFile(t, w, "a", "a") }, nil,
			map[string]any{"repo": hereRepo, "title": "t", "body": "b", "base": "nope"}, DecisionInvalid, outputs.RulePRWrongBase, `go into "main"`},
		{"stacked base refuses the default branch", func(t *testing.T, w string) { commitFile(t, w, "a", "a") },
			func(c *Config) { c.DefaultBase, c.StartCommit = "feature", run(t, c.WorkDir, "rev-parse", "HEAD~1") },
			pr, DecisionInvalid, outputs.RulePRWrongBase, `not "main"`},
		{"thread's base unknown in the checkout", func(t *testing.T, w string) { commitFile(t, w, "a", "a") },
			func(c *Config) { c.DefaultBase = "feature" },
			map[string]any{"repo": hereRepo, "title": "t", "body": "b"}, DecisionInvalid, RuleUnknownBase, `"feature" is not known`},
		{"start commit is the fallback base", func(t *testing.T, w string) { commitFile(t, w, "a", "a") },
			func(c *Config) { c.DefaultBase, c.StartCommit = "feature", run(t, c.WorkDir, "rev-parse", "HEAD~1") },
			map[string]any{"repo": hereRepo, "title": "t", "body": "b", "base": "feature"}, DecisionAllowed, "", "into feature"},
		{"default base", func(t *testing.T, w string) { commitFile(t, w, "a", "a") }, nil,
			map[string]any{"repo": hereRepo, "title": "t", "body": "b"}, DecisionAllowed, "", "into main"},
		{"no base at all", func(t *testing.T, w string) { commitFile(t, w, "a", "a") }, func(c *Config) { c.DefaultBase = "" },
			map[string]any{"repo": hereRepo, "title": "t", "body": "b"}, DecisionInvalid, outputs.RulePRWrongBase, `is not known`},
		{"wrong repo for the checkout", nil, func(c *Config) { c.CheckoutRepo = "octo/other" }, pr, DecisionInvalid, RuleWrongRepo, "only be opened on octo/other"},
		{"no checkout", nil, func(c *Config) { c.WorkDir = "" }, pr, DecisionInvalid, RuleNoCheckout, "no checked-out repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // its own run dir and clone (gitRepo); git work dominates
			cfg := baseConfig(t)
			cfg.WorkDir, cfg.DefaultBase = gitRepo(t), "main"
			if c.setup != nil {
				c.setup(t, cfg.WorkDir)
			}
			if c.mod != nil {
				c.mod(&cfg)
			}
			cs := connect(t, cfg)
			text, isErr := call(t, cs, contract.ToolCreatePullRequest, c.args)
			assert.Equal(t, c.decision != DecisionAllowed, isErr, text)
			assert.Contains(t, text, c.contains)
			recs := readLog(t, cfg)
			require.Len(t, recs, 1)
			assert.Equal(t, c.decision, recs[0].Decision)
			assert.Equal(t, c.rule, recs[0].Rule)
			es := readOutputs(t, cfg)
			if c.decision != DecisionAllowed {
				assert.Empty(t, es)
				assert.NoFileExists(t, filepath.Join(cfg.RunDir, "pr-0.bundle"))
				return
			}
			require.Len(t, es, 1)
			e := es[0]
			assert.Equal(t, "pr-0.bundle", e.Bundle)
			assert.Equal(t, gittemplate.Head(t, cfg.WorkDir), e.HeadSHA)
			assert.Equal(t, 1, e.Commits)
			assert.NotEmpty(t, e.Base)
			assert.FileExists(t, filepath.Join(cfg.RunDir, e.Bundle))
			assert.Empty(t, run(t, cfg.WorkDir, "status", "--porcelain"), "everything is committed")
			if c.name == "edits are committed by the gate" {
				assert.Equal(t, "robot <robot@users.noreply.github.com>|robot <robot@users.noreply.github.com>|Fix typo",
					run(t, cfg.WorkDir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"))
			}
		})
	}
}

// TestPullRequestSeparateGitDir: with the git directory outside the tree,
// a .git the agent writes into the tree changes nothing; the gate commits
// through the real git directory.
func TestPullRequestSeparateGitDir(t *testing.T) {
	cfg := baseConfig(t)
	clone := gitRepo(t)
	gitDir := filepath.Join(t.TempDir(), "target.git")
	require.NoError(t, os.Rename(filepath.Join(clone, ".git"), gitDir))
	run(t, gitDir, "config", "core.bare", "false")
	cfg.WorkDir, cfg.GitDir, cfg.DefaultBase = clone, gitDir, "main"
	require.NoError(t, os.WriteFile(filepath.Join(clone, "README.md"), []byte("fixed\n"), 0o644))
	// a planted .git directory with a hook-running config is just ignored
	require.NoError(t, os.MkdirAll(filepath.Join(clone, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(clone, ".git", "config"), []byte("[core]\n\thooksPath = hooks\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(clone, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch "+filepath.Join(clone, "PWNED")+"\n"), 0o755))
	cs := connect(t, cfg)
	text, isErr := call(t, cs, contract.ToolCreatePullRequest, map[string]any{"repo": hereRepo, "title": "Fix", "body": "b", "base": "main"})
	require.False(t, isErr, text)
	es := readOutputs(t, cfg)
	require.Len(t, es, 1)
	assert.Equal(t, gittemplate.Head(t, gitDir), es[0].HeadSHA)
	assert.Equal(t, "README.md", run(t, gitDir, "show", "--name-only", "--format=", "HEAD"))
	assert.NoFileExists(t, filepath.Join(clone, "PWNED"))
}

// TestPullRequestFromForkGoesOnDefaultBranch: on a fork's pull request
// the agent starts at the fork's head, but its pull request goes into the
// default branch (origin/main): the gate puts the agent's change alone on
// it, so none of the fork's commits come along.
func TestPullRequestFromForkGoesOnDefaultBranch(t *testing.T) {
	cfg := baseConfig(t)
	work := gitRepo(t)
	commitFile(t, work, "fork-only.txt", "the fork's change\n") // HEAD: the fork's head; origin/main stays behind
	cfg.WorkDir, cfg.DefaultBase, cfg.StartCommit, cfg.CheckoutRepo = work, "main", gittemplate.Head(t, work), hereRepo
	require.NoError(t, os.WriteFile(filepath.Join(work, "README.md"), []byte("fixed\n"), 0o644))
	cs := connect(t, cfg)
	text, isErr := call(t, cs, contract.ToolCreatePullRequest, map[string]any{"repo": hereRepo, "title": "Fix readme", "body": "b"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "into main")
	es := readOutputs(t, cfg)
	require.Len(t, es, 1)
	e := es[0]
	assert.Equal(t, "main", e.Base)
	assert.Equal(t, 1, e.Commits)
	assert.NotEqual(t, gittemplate.Head(t, work), e.HeadSHA, "not the fork's branch")

	origin := run(t, work, "remote", "get-url", "origin")
	run(t, origin, "fetch", "--quiet", filepath.Join(cfg.RunDir, e.Bundle), "HEAD:refs/heads/agent")
	assert.Equal(t, e.HeadSHA, run(t, origin, "rev-parse", "agent"))
	assert.Equal(t, "README.md", run(t, origin, "diff", "--name-only", "main...agent"))
	assert.Equal(t, "1", run(t, origin, "rev-list", "--count", "main..agent"))
}

func TestGateSubprocess(t *testing.T) {
	cfg := withFlags(t, baseConfig(t), "here-only")
	path := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, cfg.WriteFile(path))
	cmd := exec.Command(os.Args[0], "mcp", "--config", path)
	cmd.Env = append(os.Environ(), serveEnv+"=1", "GORACE=atexit_sleep_ms=0")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	text, isErr := call(t, cs, contract.ToolAddComment, comment(hereRepo, 7, "hello"))
	assert.False(t, isErr, text)
	text, isErr = call(t, cs, contract.ToolCreateIssue, map[string]any{"repo": hereRepo, "title": "t", "body": "b"})
	assert.True(t, isErr)
	assert.Contains(t, text, "here-only")
	require.NoError(t, cs.Close())
	assert.Len(t, readOutputs(t, cfg), 1)
	assert.Len(t, readLog(t, cfg), 2)
}

func TestDisplayName(t *testing.T) {
	for _, tool := range contract.GateTools {
		assert.NotEmpty(t, DisplayName(tool), tool)
		assert.Equal(t, DisplayName(tool), DisplayName(contract.EngineToolName(tool)), tool)
	}
	assert.Equal(t, "Comment on an issue or pull request", DisplayName("mcp__gate__add_comment"))
	assert.Empty(t, DisplayName("Bash"))
	assert.Empty(t, DisplayName("mcp__other__add_comment"))
}
