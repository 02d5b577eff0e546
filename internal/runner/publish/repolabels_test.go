package publish

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// withRepoLabels records in the trusted context what the dispatcher
// gathers for repo=: testOther's labels docs and bug, and acme/secret's
// as unreadable.
func (f *fixture) withRepoLabels() {
	f.t.Helper()
	var ctx map[string]any
	require.NoError(f.t, json.Unmarshal(f.context, &ctx))
	ctx["repo_labels"] = map[string]any{testOther: []map[string]any{{"name": "docs"}, {"name": "bug"}}}
	ctx["truncation"] = map[string]any{"repo_labels": map[string]any{
		testOther:     map[string]any{"total": 2, "kept": 2},
		"acme/secret": map[string]any{"total": 0, "kept": 0, "missing": "not readable by the bot (HTTP 404)"}}}
	var err error
	f.context, err = json.Marshal(ctx)
	require.NoError(f.t, err)
}

// A label change on an issue in a repository repo= names is applied
// against that repository's labels as the context recorded them, once,
// even when the answer to the label POST is lost; the flags that refuse
// label changes still refuse them there, and so does a label the
// repository lacks or a repository whose labels were not readable.
func TestPublishLabelsInRepoFlagRepository(t *testing.T) {
	const both = "repo=acme/widgets repo=acme/other repo=acme/secret"
	cases := []struct {
		name      string
		cfg       string
		entry     func(n int) outputs.Entry
		fault     githubsim.FaultKind // applied, then its answer lost
		wantRule  string              // "" = written
		wantLabel []string            // on acme/other#n afterwards
	}{
		{"added", both, func(n int) outputs.Entry { return otherLabels(n, "DOCS") }, "", "", []string{"docs"}},
		{"added, the answer lost (502)", both, func(n int) outputs.Entry { return otherLabels(n, "docs") }, githubsim.FaultStatus502, "", []string{"docs"}},
		{"added, the connection reset", both, func(n int) outputs.Entry { return otherLabels(n, "docs") }, githubsim.FaultReset, "", []string{"docs"}},
		{"added, no answer in time", both, func(n int) outputs.Entry { return otherLabels(n, "docs") }, githubsim.FaultHang, "", []string{"docs"}},
		{"a label the repository lacks", both, func(n int) outputs.Entry { return otherLabels(n, "needs-triage") }, "", RuleNoSuchLabel, nil},
		{"labels not readable", both, func(int) outputs.Entry {
			return outputs.Entry{Kind: policy.KindLabels, Repo: "acme/secret", Number: 1, Labels: []string{"bug"}}
		}, "", outputs.RuleLabelsUnknown, nil},
		{"repo= does not name it", "repo=acme/widgets", func(n int) outputs.Entry { return otherLabels(n, "docs") }, "", policy.RuleRepoNotAllowed, nil},
		{"no repo= at all", "", func(n int) outputs.Entry { return otherLabels(n, "docs") }, "", policy.RuleNotHere, nil},
		{"deny=", both + " deny=acme/other", func(n int) outputs.Entry { return otherLabels(n, "docs") }, "", policy.RuleRepoDenied, nil},
		{"comment-only", both + " comment-only", func(n int) outputs.Entry { return otherLabels(n, "docs") }, "", policy.RuleCommentOnly, nil},
		{"here-only", both + " here-only", func(n int) outputs.Entry { return otherLabels(n, "docs") }, "", policy.RuleHereOnly, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			f.withRepoLabels()
			for _, l := range []string{"docs", "bug"} {
				require.NoError(t, f.sim.CreateLabel(testOther, l, ""))
			}
			n, err := f.sim.CreateIssue(testOther, "alice", "related", "b")
			require.NoError(t, err)
			f.add(tc.entry(n))
			if tc.fault != "" {
				f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/acme/other/issues/*/labels", Kind: tc.fault,
					Delay: 5 * time.Millisecond, AfterApply: true, OnCall: 1})
			}
			res := f.run(f.labelOptions())
			assert.Empty(t, res.PublishProblems)
			assert.Equal(t, tc.wantLabel, f.sim.IssueLabels(testOther, n))
			assert.Equal(t, []string{"docs", "bug"}, f.sim.RepoLabels(testOther), "no label is ever created")
			if tc.wantRule != "" {
				require.Len(t, res.Refused, 1)
				assert.Equal(t, tc.wantRule, res.Refused[0].Rule, res.Refused[0].Reason)
				for _, w := range res.Written {
					assert.NotEqual(t, policy.KindLabels, w.Kind, "only the failure notice is written")
				}
				return
			}
			assert.Empty(t, res.Refused)
			require.Len(t, res.Written, 1)
			assert.Equal(t, []string{fmt.Sprintf("%s#%d +docs", testOther, n)}, f.tracking().Labels)
			posts, applied := 0, 0
			for _, r := range f.sim.Requests() {
				if r.Method == "POST" && r.Path == fmt.Sprintf("/repos/%s/issues/%d/labels", testOther, n) {
					posts++
				}
				if r.AppliedStatus != 0 {
					applied++
				}
			}
			assert.Equal(t, 1, posts, "one POST: a retry after a lost answer finds the label there")
			if tc.fault != "" {
				assert.Equal(t, 1, applied, "the write was applied and its answer lost")
			}
		})
	}
}

func otherLabels(n int, names ...string) outputs.Entry {
	return outputs.Entry{Kind: policy.KindLabels, Repo: testOther, Number: n, Labels: names}
}

// The refusal for a repository whose labels were not readable says so.
func TestPublishLabelsUnreadableRepoSaysWhy(t *testing.T) {
	f := newFixture(t, "repo=acme/widgets repo=acme/secret")
	f.withRepoLabels()
	f.add(outputs.Entry{Kind: policy.KindLabels, Repo: "acme/secret", Number: 1, Labels: []string{"bug"}})
	res := f.run(f.labelOptions())
	require.Len(t, res.Refused, 1)
	assert.Contains(t, res.Refused[0].Reason, "the labels of acme/secret were not readable when the mention was read (not readable by the bot (HTTP 404))")
}
