package publish

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"

	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecondaryLimits: rate-limit answers and server errors during publish
// still leave every write on GitHub exactly once.
func TestSecondaryLimits(t *testing.T) {
	f := newFixture(t, "comment-limit=5 issue-limit=2")
	for i := 0; i < 4; i++ {
		f.add(f.comment(testTarget, f.issue, fmt.Sprintf("comment %d", i)))
	}
	f.add(f.newIssue(testOther, "a"))
	f.add(f.newIssue(testOther, "b"))
	f.sim.SetSecondaryLimit(2)
	f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/*/*/issues/*/comments", Kind: githubsim.FaultSecondaryLimit, OnCall: 2})
	f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/*/*/issues/*/comments", Kind: githubsim.FaultStatus502, OnCall: 3})
	f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/*/*/issues", Kind: githubsim.FaultReset, OnCall: 1})
	res := f.run(f.options())

	assert.Equal(t, "completed", res.Status, "problems: %v", res.Problems)
	assert.Len(t, res.Written, 6)
	seen := map[string]int{}
	for _, c := range f.botComments(testTarget, f.issue) {
		seen[c.GetBody()[:9]]++
	}
	assert.Equal(t, map[string]int{"comment 0": 1, "comment 1": 1, "comment 2": 1, "comment 3": 1}, seen)
	assert.Len(t, f.botIssues(testOther), 2)
	limited := 0
	for _, r := range f.sim.Requests() {
		if r.Status == 403 || r.Status == 429 {
			limited++
		}
	}
	assert.GreaterOrEqual(t, limited, 2, "the secondary limit was hit")
	for _, r := range f.sim.Requests() {
		assert.NotContains(t, r.Path+r.Query, testToken, "the token never appears in a URL")
	}
}

// TestNoWriteNotice: nothing written and no noop → a notice on the thread
// linking the log issue, a failed run, 😕 on the trigger.
func TestNoWriteNotice(t *testing.T) {
	f := newFixture(t, "")
	res := f.run(f.options())
	assert.Equal(t, "failed", res.Status)
	cs := f.botComments(testTarget, f.issue)
	require.Len(t, cs, 1)
	assert.Contains(t, cs[0].GetBody(), fmt.Sprintf("https://github.com/%s/issues/%d", testControl, f.logIssue))
	assert.Equal(t, []string{"confused"}, f.sim.Reactions(testTarget, f.trigger.GetID()))
	assert.Equal(t, []string{contract.CauseFailed}, labelNames(f.log()))
	assert.Equal(t, render.Tracking{Comments: []string{cs[0].GetHTMLURL()}, Repos: []string{testTarget}}, f.tracking(),
		"the notice is a write like any other")

	// a re-run does not post the notice again
	f.run(f.options())
	assert.Len(t, f.botComments(testTarget, f.issue), 1)
}

// TestNoticeNeedsPolicy: no notice where the policy allows no comment, and
// a noop counts as a deliberate answer.
func TestNoticeNeedsPolicy(t *testing.T) {
	f := newFixture(t, "comment-limit=0")
	res := f.run(f.options())
	assert.Equal(t, "failed", res.Status)
	assert.Empty(t, f.botComments(testTarget, f.issue))

	g := newFixture(t, "")
	g.add(outputs.Entry{Kind: outputs.KindNoop, Reason: "nothing to do"})
	res = g.run(g.options())
	assert.Equal(t, "completed", res.Status)
	assert.Empty(t, g.botComments(testTarget, g.issue))
	assert.Equal(t, "closed", g.log().GetState())
}

// TestFailureLabels: each agent failure leaves the log issue open with its
// label and an error comment; a later success clears the label.
func TestFailureLabels(t *testing.T) {
	tests := []struct {
		runJSON, label, heading string
	}{
		{`{"status":"failed","failure":"crash","error":"claude exited 3: boom"}`, contract.CauseCrash, "## Error: Claude Code Runtime Error"},
		{`{"status":"failed","failure":"loop-detected","loop":{"tool":"Read","arguments":"{\"f\":1}","count":6}}`, contract.CauseLoop, "## Error: Loop Detected"},
		{`{"status":"failed","failure":"timeout"}`, contract.CauseTimeout, HeadingTimeout},
		{`{"status":"failed","failure":"max-turns","error":"error_max_turns"}`, contract.CauseMaxTurns, HeadingMaxTurns},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			f := newFixture(t, "")
			f.add(f.comment(testTarget, f.issue, "partial answer"))
			f.writeRun(tc.runJSON)
			res := f.run(f.options())
			assert.Equal(t, tc.label, res.Cause)
			log := f.log()
			assert.Equal(t, "open", log.GetState())
			assert.Equal(t, []string{tc.label}, labelNames(log))
			var errs int
			for _, c := range f.botComments(testControl, f.logIssue) {
				if contains(c.GetBody(), tc.heading) {
					errs++
				}
			}
			assert.Equal(t, 1, errs)

			f.writeRun(`{"status":"completed"}`)
			res = f.run(f.options())
			assert.Equal(t, "completed", res.Status)
			assert.Empty(t, labelNames(f.log()))
			assert.Equal(t, "closed", f.log().GetState())
		})
	}
}

// TestNoRecord: the agent artifact is missing: failure, reported.
func TestNoRecord(t *testing.T) {
	f := newFixture(t, "")
	o := f.options()
	o.RunDir, o.NoRecordReason = "", "runs/ does not exist"
	res := f.run(o)
	assert.Equal(t, "failed", res.Status)
	assert.Equal(t, "agent produced no record: runs/ does not exist", res.Problems[0])
	found := false
	for _, c := range f.botComments(testControl, f.logIssue) {
		found = found || contains(c.GetBody(), HeadingNoRecord)
	}
	assert.True(t, found)
}

// TestNoRecordAfterTheStageStarted: no artifact, and GitHub says the
// agent job failed after its stage started: the report says the machine
// may not have been able to write the record.
func TestNoRecordAfterTheStageStarted(t *testing.T) {
	f := newFixture(t, "")
	o := f.options()
	o.RunDir, o.NoRecordReason = "", "runs/ does not exist"
	o.AgentJob = AgentJob{Result: contract.AgentJobFailure, Stage: contract.AgentStageStarted}
	res := f.run(o)
	assert.Equal(t, "failed", res.Status)
	assert.Contains(t, res.Problems[0], "agent produced no record: runs/ does not exist; the agent job failed after its stage started")
	found := false
	for _, c := range f.botComments(testControl, f.logIssue) {
		found = found || contains(c.GetBody(), "a full disk or a read-only run directory")
	}
	assert.True(t, found)
}

// TestIssueBodyTriggerAndRefs: a mention in an issue body gets the issue
// reaction; the job's refs in CONTROL are deleted at the end.
func TestIssueBodyTriggerAndRefs(t *testing.T) {
	f := newFixture(t, "")
	n, err := f.sim.CreateIssue(testTarget, "alice", "Please", "@"+testBot+" do it")
	require.NoError(t, err)
	is, _ := f.sim.Issue(testTarget, n)
	f.context = f.contextFor(testTarget, n, is)
	f.add(f.comment(testTarget, n, "done"))
	ctx := context.Background()
	owner, name := splitRepo(testControl)
	main, _, err := f.bot.Git.GetRef(ctx, owner, name, "heads/main")
	require.NoError(t, err)
	jobRefs := []string{"shards/0", "lock"}
	jobID := mustJobID(t, f.context)
	for _, r := range jobRefs {
		_, _, err := f.bot.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/mention-runner/jobs/" + jobID + "/" + r), Object: main.Object})
		require.NoError(t, err)
	}
	require.Len(t, f.sim.Refs(testControl, "refs/mention-runner/"), 2)

	res := f.run(f.options())
	assert.Equal(t, "completed", res.Status)
	assert.Empty(t, f.sim.Refs(testControl, "refs/mention-runner/jobs/"), "shard refs and lock deleted")
	// The job is done by the log issue's last line (assemble stops a later
	// delivery on it): publish writes no state ref of its own.
	assert.Empty(t, f.sim.Refs(testControl, "refs/mention-runner/"))
	assert.True(t, contract.LogIssueFinal(f.log().GetBody(), jobID), "the log issue ends with the job's final marker")
	rs, _, err := f.bot.Reactions.ListIssueReactions(ctx, owner2(testTarget), name2(testTarget), n, nil)
	require.NoError(t, err)
	assert.Empty(t, rs, "answered on the thread: no 🚀")
}

// TestReviewCommentTriggerReaction: a mention in a pull request review
// comment gets 🚀 (or 😕) on that review comment, not on an issue comment;
// a completed run that answered on the thread gets no reaction (the answer
// says it finished, and a reaction costs one of the bot's writes).
func TestReviewCommentTriggerReaction(t *testing.T) {
	tests := []struct {
		name   string
		write  string // "": nothing; "here": a comment on the thread; "elsewhere": one on another thread
		status string
		want   []string
	}{
		{"answered on the thread", "here", "completed", []string{}},
		{"answered elsewhere", "elsewhere", "completed", []string{"rocket"}},
		{"nothing written", "", "failed", []string{"confused"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			pr, err := f.sim.CreatePR(testTarget, "alice", "Change", "", "feature", "main", "")
			require.NoError(t, err)
			rcID, err := f.sim.AddReviewComment(testTarget, pr, 0, "alice", "README.md", 1, "@"+testBot+" explain this line")
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rcs, _, err := f.bot.PullRequests.ListComments(ctx, owner2(testTarget), name2(testTarget), pr, nil)
			require.NoError(t, err)
			require.Len(t, rcs, 1)
			require.Equal(t, rcID, rcs[0].GetID())
			f.context = f.contextFor(testTarget, pr, rcs[0])
			switch tc.write {
			case "here":
				f.add(f.comment(testTarget, pr, "It parses the header."))
			case "elsewhere":
				other, err := f.sim.CreateIssue(testTarget, "alice", "Tracking", "")
				require.NoError(t, err)
				f.add(f.comment(testTarget, other, "It parses the header."))
			}

			res := f.run(f.options())
			assert.Equal(t, tc.status, res.Status)
			assert.Equal(t, tc.want, f.sim.ReviewCommentReactions(testTarget, rcID))
			assert.Empty(t, f.sim.Reactions(testTarget, rcID), "not sent as an issue comment reaction")
			rs, _, err := f.bot.Reactions.ListIssueReactions(ctx, owner2(testTarget), name2(testTarget), pr, nil)
			require.NoError(t, err)
			assert.Empty(t, rs, "not sent to the pull request itself")
		})
	}
}
