package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

const prDiff = "diff --git a/src/app.go b/src/app.go\n" +
	"--- a/src/app.go\n+++ b/src/app.go\n" +
	"@@ -10,3 +10,4 @@\n a\n-b\n+b2\n+b3\n c\n"

// withPR turns the fixture's thread into a pull request with prDiff and
// the repository labels bug and needs-triage; the trigger is a comment on
// it, and the trusted context records its head and the labels.
func (f *fixture) withPR(cfg string) int {
	f.t.Helper()
	pr, err := f.sim.CreatePR(testTarget, "alice", "Fix widgets", "body", "feature", "main", prDiff)
	require.NoError(f.t, err)
	for _, l := range []string{"bug", "needs-triage"} {
		require.NoError(f.t, f.sim.CreateLabel(testTarget, l, ""))
	}
	body := "@" + testBot + " review this"
	if cfg != "" {
		body = "@" + testBot + " !cfg " + cfg + "\nreview this"
	}
	f.trigger, err = f.sim.Comment(testTarget, pr, "alice", body)
	require.NoError(f.t, err)
	p, _, err := f.bot.PullRequests.Get(context.Background(), "acme", "widgets", pr)
	require.NoError(f.t, err)
	ctx := map[string]any{
		"repository": map[string]any{"full_name": testTarget, "default_branch": "main"},
		"issue":      map[string]any{"number": pr, "pull_request": map[string]any{"url": "x"}},
		"pull_request": map[string]any{"number": pr,
			"head": map[string]any{"sha": p.GetHead().GetSHA(), "ref": "feature", "repo": map[string]any{"full_name": testTarget}},
			"base": map[string]any{"ref": "main"}},
		"labels":          []map[string]any{{"name": "bug"}, {"name": "needs-triage"}},
		"trigger_comment": f.trigger,
	}
	f.context, err = json.Marshal(ctx)
	require.NoError(f.t, err)
	return pr
}

func reviewEntry(pr int, comments ...outputs.ReviewComment) outputs.Entry {
	return outputs.Entry{Kind: policy.KindReview, Repo: testTarget, Number: pr, Body: "Summary of the review.", Comments: comments}
}

func labelEntry(pr int, remove bool, names ...string) outputs.Entry {
	return outputs.Entry{Kind: policy.KindLabels, Repo: testTarget, Number: pr, Labels: names, Remove: remove}
}

func (f *fixture) labelOptions() Options {
	o := f.options()
	o.Ceilings.LabelLimit, o.Ceilings.ReviewComments = 5, 30
	return o
}

func TestPublishReview(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	f.add(reviewEntry(pr, outputs.ReviewComment{Path: "src/app.go", Line: 11, Body: "why b2?"},
		outputs.ReviewComment{Path: "src/app.go", Line: 12, StartLine: 10, Body: "range"}))
	res := f.run(f.labelOptions())
	require.Empty(t, res.Refused)
	require.Len(t, res.Written, 1)
	rs := f.sim.Reviews(testTarget, pr)
	require.Len(t, rs, 1)
	assert.Equal(t, "COMMENTED", rs[0].State)
	assert.Equal(t, testBot, rs[0].Author)
	assert.Contains(t, rs[0].Body, "> [!NOTE]")
	assert.Contains(t, rs[0].Body, contract.OutputMarker(f.jobID(), 0))
	require.Len(t, rs[0].Comments, 2)
	assert.Equal(t, "src/app.go", rs[0].Comments[0].Path)
	p, _, err := f.bot.PullRequests.Get(context.Background(), "acme", "widgets", pr)
	require.NoError(t, err)
	assert.Equal(t, p.GetHead().GetSHA(), rs[0].CommitID, "commit_id is the recorded head")
	tr := f.tracking()
	require.Len(t, tr.Comments, 1)
	assert.Contains(t, tr.Comments[0], fmt.Sprintf("/pull/%d#pullrequestreview-%d", pr, rs[0].ID))

	// publish again (a re-run): the review is found by its marker
	res = f.run(f.labelOptions())
	require.Len(t, res.Written, 1)
	assert.True(t, res.Written[0].Existing)
	assert.Len(t, f.sim.Reviews(testTarget, pr), 1)
}

func TestPublishReviewOutsideDiffRefused(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	f.add(reviewEntry(pr, outputs.ReviewComment{Path: "src/app.go", Line: 99, Body: "far away"}))
	f.add(reviewEntry(pr, outputs.ReviewComment{Path: "../../etc/passwd", Line: 1, Body: "x"}))
	res := f.run(f.labelOptions())
	require.Len(t, res.Refused, 2)
	assert.Equal(t, RuleNotInDiff, res.Refused[0].Rule)
	assert.Contains(t, res.Refused[0].Reason, "src/app.go line 99 (RIGHT) is not in the pull request's diff; its hunks show RIGHT lines 10–13")
	assert.Equal(t, RuleNotInDiff, res.Refused[1].Rule)
	assert.Empty(t, f.sim.Reviews(testTarget, pr))
}

func TestPublishLabels(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	f.sim.AddIssueLabels(testTarget, pr, "needs-triage")
	f.add(labelEntry(pr, false, "BUG"))
	f.add(labelEntry(pr, true, "needs-triage"))
	f.add(labelEntry(pr, false, "bug")) // the same label queued twice: no second write
	f.add(labelEntry(pr, false, "wontfix"))
	before := len(f.sim.Requests())
	res := f.run(f.labelOptions())
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RuleNoSuchLabel, res.Refused[0].Rule)
	assert.Equal(t, []string{"bug"}, f.sim.IssueLabels(testTarget, pr))
	assert.Equal(t, []string{"bug", "needs-triage"}, f.sim.RepoLabels(testTarget), "no label is ever created")
	assert.Equal(t, []string{fmt.Sprintf("%s#%d +bug", testTarget, pr), fmt.Sprintf("%s#%d -needs-triage", testTarget, pr),
		fmt.Sprintf("%s#%d +bug", testTarget, pr)}, f.tracking().Labels)
	writes := 0
	for _, r := range f.sim.Requests()[before:] {
		if strings.Contains(r.Path, fmt.Sprintf("/issues/%d/labels", pr)) && r.Method != "GET" {
			writes++
		}
	}
	assert.Equal(t, 2, writes, "one POST, one DELETE: the second +bug found it there")
}

// TestNewEndpointsApplyThenFail: each new write endpoint applies the write
// and loses the answer (502, reset, hang); publish finds what landed and
// nothing is doubled or lost.
func TestNewEndpointsApplyThenFail(t *testing.T) {
	kinds := []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang}
	for _, ep := range []struct{ method, path string }{
		{"POST", "/repos/acme/widgets/pulls/*/reviews"},
		{"POST", "/repos/acme/widgets/issues/*/labels"},
		{"DELETE", "/repos/acme/widgets/issues/*/labels/*"},
	} {
		for _, kind := range kinds {
			t.Run(ep.method+" "+ep.path+" "+string(kind), func(t *testing.T) {
				f := newFixture(t, "")
				pr := f.withPR("")
				f.sim.AddIssueLabels(testTarget, pr, "needs-triage")
				f.add(reviewEntry(pr, outputs.ReviewComment{Path: "src/app.go", Line: 11, Body: "why b2?"}))
				f.add(labelEntry(pr, false, "bug"))
				f.add(labelEntry(pr, true, "needs-triage"))
				f.sim.AddFault(githubsim.Fault{Method: ep.method, Path: ep.path, Kind: kind, Delay: 5 * time.Millisecond, AfterApply: true, OnCall: 1})
				o := f.labelOptions()
				res := f.run(o)
				assert.Empty(t, res.Refused)
				assert.Empty(t, res.PublishProblems)
				require.Len(t, res.Written, 3)
				assert.Len(t, f.sim.Reviews(testTarget, pr), 1, "one review, not two")
				assert.Equal(t, []string{"bug"}, f.sim.IssueLabels(testTarget, pr))
				fired := 0
				for _, r := range f.sim.Requests() {
					if r.AppliedStatus != 0 {
						fired++
					}
				}
				assert.Equal(t, 1, fired, "the write was applied and its answer lost")
			})
		}
	}
}

func (f *fixture) jobID() string {
	var c struct {
		Trigger struct {
			NodeID string `json:"node_id"`
		} `json:"trigger_comment"`
	}
	require.NoError(f.t, json.Unmarshal(f.context, &c))
	return transport.JobID(c.Trigger.NodeID)
}

func TestPublishReviewSummaryOnly(t *testing.T) {
	f := newFixture(t, "here-only")
	pr := f.withPR("here-only")
	f.add(reviewEntry(pr))
	f.add(labelEntry(pr, false, "bug")) // here-only: a label is not a comment
	res := f.run(f.labelOptions())
	require.Len(t, res.Written, 1)
	require.Len(t, res.Refused, 1)
	assert.Equal(t, policy.RuleHereOnly, res.Refused[0].Rule)
	rs := f.sim.Reviews(testTarget, pr)
	require.Len(t, rs, 1)
	p, _, err := f.bot.PullRequests.Get(context.Background(), "acme", "widgets", pr)
	require.NoError(t, err)
	assert.Equal(t, p.GetHead().GetSHA(), rs[0].CommitID, "commit_id is the recorded head without inline comments too")
	assert.Empty(t, f.sim.IssueLabels(testTarget, pr))
}

func TestPublishLabelsWithoutTriageRole(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	var ctx map[string]any
	require.NoError(t, json.Unmarshal(f.context, &ctx))
	ctx["repository"].(map[string]any)["permissions"] = map[string]any{"triage": false, "pull": true}
	var err error
	f.context, err = json.Marshal(ctx)
	require.NoError(t, err)
	f.add(labelEntry(pr, false, "bug"))
	res := f.run(f.labelOptions())
	require.Len(t, res.Refused, 1)
	assert.Equal(t, outputs.RuleNoTriage, res.Refused[0].Rule)
	assert.Empty(t, f.sim.IssueLabels(testTarget, pr))
}

// A label deleted from the repository after the mention is refused, not
// re-created: GitHub creates a label it is asked to add and does not have.
func TestPublishLabelDeletedAfterMention(t *testing.T) {
	f := newFixture(t, "")
	pr := f.withPR("")
	f.sim.DeleteRepoLabel(testTarget, "bug") // the context still lists it
	f.add(labelEntry(pr, false, "bug"))
	res := f.run(f.labelOptions())
	require.Len(t, res.Refused, 1)
	assert.Equal(t, RuleNoSuchLabel, res.Refused[0].Rule)
	assert.Contains(t, res.Refused[0].Reason, "no longer has the label")
	assert.NotContains(t, f.sim.RepoLabels(testTarget), "bug", "the deleted label is not created again")
	assert.Empty(t, f.sim.IssueLabels(testTarget, pr))
}
