package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

const reviewDiff = "diff --git a/src/app.go b/src/app.go\n" +
	"--- a/src/app.go\n+++ b/src/app.go\n" +
	"@@ -10,3 +10,4 @@\n a\n-b\n+b2\n+b3\n c\n"

// prConfig is a run on the pull request octo/app#7 whose recorded diff is
// reviewDiff and whose repository has the labels bug and needs-triage.
func prConfig(t *testing.T, flags string) Config {
	t.Helper()
	c := baseConfig(t)
	if flags != "" {
		c = withFlags(t, c, flags)
	}
	c.HereIsPR = true
	c.DiffFile = filepath.Join(t.TempDir(), "pr.diff")
	require.NoError(t, os.WriteFile(c.DiffFile, []byte(reviewDiff), 0o644))
	c.Labels = map[string][]string{hereRepo: {"bug", "needs-triage", "good first issue"}}
	return c
}

func review(n int, comments ...map[string]any) map[string]any {
	r := map[string]any{"repo": hereRepo, "number": n, "body": "Looks good overall."}
	if comments != nil {
		r["comments"] = comments
	}
	return r
}

func inline(path string, line int) map[string]any {
	return map[string]any{"path": path, "line": line, "body": "nit"}
}

func labels(tool string, names ...string) (string, map[string]any) {
	return tool, map[string]any{"repo": hereRepo, "number": 7, "labels": names}
}

// runSteps calls each step and checks its decision and text.
func runSteps(t *testing.T, cfg Config, steps []step) {
	t.Helper()
	cs := connect(t, cfg)
	for i, s := range steps {
		text, isErr := call(t, cs, s.tool, s.args)
		assert.Equal(t, s.decision != DecisionAllowed, isErr, "step %d: %s", i, text)
		assert.Contains(t, text, s.contains, "step %d", i)
	}
	recs := readLog(t, cfg)
	require.Len(t, recs, len(steps))
	for i, s := range steps {
		assert.Equal(t, s.decision, recs[i].Decision, "record %d", i)
		assert.Equal(t, s.rule, recs[i].Rule, "record %d", i)
	}
}

func TestReviewAllowedOnTheDiff(t *testing.T) {
	cfg := prConfig(t, "")
	runSteps(t, cfg, []step{
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11), map[string]any{"path": "src/app.go", "line": 12, "start_line": 10, "body": "range"},
			map[string]any{"path": "src/app.go", "line": 11, "side": "LEFT", "body": "removed"}),
			DecisionAllowed, "", "queued (output #0): the review of octo/app#7 with 3 inline comment(s)"},
	})
	es := readOutputs(t, cfg)
	require.Len(t, es, 1)
	assert.Equal(t, policy.KindReview, es[0].Kind)
	assert.Equal(t, []outputs.ReviewComment{{Path: "src/app.go", Line: 11, Body: "nit"}, {Path: "src/app.go", Line: 12, StartLine: 10, Body: "range"},
		{Path: "src/app.go", Line: 11, Side: "LEFT", Body: "removed"}}, es[0].Comments)
}

func TestReviewCommentOutsideDiff(t *testing.T) {
	runSteps(t, prConfig(t, ""), []step{
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11), inline("src/app.go", 40)), DecisionDenied, outputs.RuleNotInDiff,
			"inline comment 2: src/app.go line 40 (RIGHT) is not in the pull request's diff; its hunks show RIGHT lines 10–13"},
	})
}

func TestReviewPathDotDotOrBaseOnly(t *testing.T) {
	runSteps(t, prConfig(t, ""), []step{
		{contract.ToolCreateReview, review(7, inline("src/../../etc/passwd", 11)), DecisionDenied, outputs.RuleNotInDiff, "is not a file path of the repository"},
		{contract.ToolCreateReview, review(7, inline("README.md", 1)), DecisionDenied, outputs.RuleNotInDiff, "README.md is not in the pull request's diff"},
	})
}

func TestReviewBodyWithMarker(t *testing.T) {
	forged := contract.OutputMarker("job-1", 5)
	r := review(7, inline("src/app.go", 11))
	r["body"] = "fine\n" + forged
	withInline := review(7, map[string]any{"path": "src/app.go", "line": 11, "body": "x " + forged})
	runSteps(t, prConfig(t, ""), []step{
		{contract.ToolCreateReview, r, DecisionDenied, outputs.RuleForgedMarker, "mention-runner marker"},
		{contract.ToolCreateReview, withInline, DecisionDenied, outputs.RuleForgedMarker, "mention-runner marker"},
	})
}

func TestReviewThousandInlineComments(t *testing.T) {
	many := make([]map[string]any, 1000)
	for i := range many {
		many[i] = inline("src/app.go", 11)
	}
	runSteps(t, prConfig(t, ""), []step{
		{contract.ToolCreateReview, review(7, many...), DecisionDenied, outputs.RuleReviewComments, "the review has 1000 inline comments; review-comment-limit allows 30 per review"},
	})
}

func TestReviewFlagsAndPlaces(t *testing.T) {
	runSteps(t, prConfig(t, "here-only"), []step{
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11)), DecisionAllowed, "", "queued (output #0)"},
		{contract.ToolCreateReview, review(8), DecisionDenied, policy.RuleHereOnly, "here-only"},
	})
	runSteps(t, prConfig(t, "comment-limit=1"), []step{
		{contract.ToolCreateReview, review(7), DecisionAllowed, "", "queued (output #0)"},
		{contract.ToolAddComment, comment(hereRepo, 7, "and a comment"), DecisionDenied, policy.RuleCommentLimit, "comment-limit is 1"},
	})
	runSteps(t, prConfig(t, ""), []step{
		{contract.ToolCreateReview, review(9), DecisionDenied, outputs.RuleReviewWrongPR, "only on the pull request where the mention was made (octo/app#7)"},
	})
	issue := prConfig(t, "")
	issue.HereIsPR = false
	runSteps(t, issue, []step{
		{contract.ToolCreateReview, review(7), DecisionDenied, outputs.RuleReviewWrongPR, "only on the pull request"},
	})
}

func TestSameReviewQueuedTwice(t *testing.T) {
	cfg := prConfig(t, "")
	runSteps(t, cfg, []step{
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11)), DecisionAllowed, "", "output #0"},
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11)), DecisionAllowed, "", "output #1"},
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11)), DecisionAllowed, "", "output #2"},
		{contract.ToolCreateReview, review(7, inline("src/app.go", 11)), DecisionDenied, policy.RuleCommentLimit, "comment-limit is 3"},
	})
	assert.Len(t, readOutputs(t, cfg), 3, "each is its own output with its own marker: publish posts each once")
}

func TestLabelsAllowed(t *testing.T) {
	cfg := prConfig(t, "")
	add, addArgs := labels(contract.ToolAddLabels, "Bug", "good first issue", "bug")
	rm, rmArgs := labels(contract.ToolRemoveLabels, "needs-triage")
	runSteps(t, cfg, []step{
		{add, addArgs, DecisionAllowed, "", "queued (output #0): the label(s) Bug, good first issue will be added to octo/app#7"},
		{rm, rmArgs, DecisionAllowed, "", "removed from octo/app#7"},
	})
	es := readOutputs(t, cfg)
	require.Len(t, es, 2)
	assert.Equal(t, []string{"Bug", "good first issue"}, es[0].Labels, "a label named twice counts once")
	assert.True(t, es[1].Remove)
}

func TestLabelThatDoesNotExist(t *testing.T) {
	add, args := labels(contract.ToolAddLabels, "bug", "wontfix")
	runSteps(t, prConfig(t, ""), []step{
		{add, args, DecisionDenied, outputs.RuleNoSuchLabel, `octo/app has no label "wontfix" (labels are never created); its labels: "bug", "needs-triage", "good first issue"`},
	})
}

func TestLabelNamedLikeMarker(t *testing.T) {
	cfg := prConfig(t, "")
	marker := contract.OutputMarker("job-1", 0)
	cfg.Labels[hereRepo] = append(cfg.Labels[hereRepo], marker[:min(len(marker), 50)])
	add, args := labels(contract.ToolAddLabels, marker[:min(len(marker), 50)])
	runSteps(t, cfg, []step{{add, args, DecisionDenied, outputs.RuleForgedMarker, "mention-runner marker"}})
}

func TestLabelsDeniedOrOptedOutRepo(t *testing.T) {
	add, args := labels(contract.ToolAddLabels, "bug")
	runSteps(t, prConfig(t, "deny=octo/app"), []step{{add, args, DecisionDenied, policy.RuleRepoDenied, "deny=octo/app"}})
	blocked := prConfig(t, "")
	blocked.Blocklist = blockedList("octo/*")
	runSteps(t, blocked, []step{{add, args, DecisionDenied, policy.RuleRepoBlocked, `opt-out entry "octo/*"`}})
	runSteps(t, prConfig(t, "comment-only"), []step{{add, args, DecisionDenied, policy.RuleCommentOnly, "comment-only"}})
	runSteps(t, prConfig(t, "here-only"), []step{{add, args, DecisionDenied, policy.RuleHereOnly, "here-only"}})
	other := map[string]any{"repo": "octo/lib", "number": 3, "labels": []string{"bug"}}
	runSteps(t, prConfig(t, ""), []step{{add, other, DecisionDenied, policy.RuleNotHere, "labels may be changed only on octo/app#7"}})
	runSteps(t, prConfig(t, "repo=octo/lib repo=octo/app"), []step{{add, other, DecisionDenied, outputs.RuleLabelsUnknown, "does not know the labels of octo/lib"}})
}

func TestSameLabelQueuedTwiceAndLimit(t *testing.T) {
	cfg := prConfig(t, "")
	add, args := labels(contract.ToolAddLabels, "bug", "needs-triage")
	runSteps(t, cfg, []step{
		{add, args, DecisionAllowed, "", "output #0"},
		{add, args, DecisionAllowed, "", "output #1"},
		{add, args, DecisionDenied, policy.RuleLabelLimit, "label-limit is 5 label changes per run; this run already made 4 and this call names 2"},
	})
	assert.Len(t, readOutputs(t, cfg), 2)
	for i, e := range readOutputs(t, cfg) {
		a, _ := e.Action()
		assert.Equal(t, 2, a.Changes, fmt.Sprint(i))
	}
}

func TestLabelsWithoutTriageRole(t *testing.T) {
	cfg := prConfig(t, "")
	cfg.NoTriage = true
	add, args := labels(contract.ToolAddLabels, "bug")
	runSteps(t, cfg, []step{{add, args, DecisionDenied, outputs.RuleNoTriage, "does not have the triage role on octo/app"}})
}
