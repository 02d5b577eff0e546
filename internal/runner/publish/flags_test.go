package publish

import (
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/stretchr/testify/assert"
)

// TestPublishFlags: every !cfg flag allows what it should and refuses the
// rest, with the rule named in the log issue.
func TestPublishFlags(t *testing.T) {
	pr := outputs.Entry{Kind: policy.KindPullRequest, Repo: testTarget, Title: "Fix", Body: "fix", Bundle: "pr-0.bundle"}
	tests := []struct {
		cfg       string
		entries   func(f *fixture) []outputs.Entry
		written   int
		refused   []string // rules, in order
		comments  int      // bot comments on the thread afterwards
		newIssues int      // in acme/other
	}{
		{"comment-only", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.comment(testTarget, f.issue, "ok"), f.newIssue(testOther, "no")}
		}, 1, []string{policy.RuleCommentOnly}, 1, 0},
		{"here-only", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.comment(testTarget, f.issue, "ok"), f.comment(testOther, 1, "elsewhere")}
		}, 1, []string{policy.RuleHereOnly}, 1, 0},
		{"repo=acme/widgets", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.comment(testTarget, f.issue, "ok"), f.newIssue(testOther, "no")}
		}, 1, []string{policy.RuleRepoNotAllowed}, 1, 0},
		{"deny=acme/other", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.newIssue(testOther, "no"), f.newIssue(testTarget, "yes")}
		}, 1, []string{policy.RuleRepoDenied}, 0, 0},
		{"no-issue", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.newIssue(testOther, "no"), f.comment(testTarget, f.issue, "ok")}
		}, 1, []string{policy.RuleIssueLimit}, 1, 0},
		{"no-pr", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{pr, f.comment(testTarget, f.issue, "ok")}
		}, 1, []string{policy.RulePRLimit}, 1, 0},
		{"pr-limit=0", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{pr, f.newIssue(testOther, "yes")}
		}, 1, []string{policy.RulePRLimit}, 0, 1},
		{"issue-limit=1", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.newIssue(testOther, "first"), f.newIssue(testOther, "second")}
		}, 1, []string{policy.RuleIssueLimit}, 0, 1},
		{"comment-limit=1", func(f *fixture) []outputs.Entry {
			return []outputs.Entry{f.comment(testTarget, f.issue, "one"), f.comment(testTarget, f.issue, "two")}
		}, 1, []string{policy.RuleCommentLimit}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.cfg, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			for _, e := range tc.entries(f) {
				f.add(e)
			}
			res := f.run(f.options())
			assert.Len(t, res.Written, tc.written)
			var rules []string
			for _, r := range res.Refused {
				rules = append(rules, r.Rule)
				assert.Contains(t, f.log().GetBody(), "refused by `"+r.Rule+"`")
			}
			assert.Equal(t, tc.refused, rules)
			assert.Len(t, f.botComments(testTarget, f.issue), tc.comments)
			assert.Len(t, f.botIssues(testOther), tc.newIssues)
			assert.Equal(t, "completed", res.Status, "refusals alone do not fail a run that wrote something")
		})
	}
}
