package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// repoFlagContext is a trusted context as the dispatcher builds it for a
// mention on octo/app#7 whose repo= flags name octo/lib (labels docs and
// bug) and octo/secret (not readable).
const repoFlagContext = `{"repository":{"full_name":"octo/app"},"labels":[{"name":"needs-triage"}],` +
	`"repo_labels":{"octo/lib":[{"name":"docs"},{"name":"bug"}]},` +
	`"truncation":{"repo_labels":{"octo/lib":{"total":2,"kept":2},"octo/secret":{"total":0,"kept":0,"missing":"not readable by the bot (HTTP 403)"}}}}`

// The gate allows a label change on an issue in a repository repo= names
// when the context holds that repository's labels, with the labels it has;
// it refuses a label it lacks, a repository whose labels were not
// readable (saying so), and whatever the policy refuses: no repo= naming
// it, deny=, an opt-out, comment-only, here-only.
func TestLabelsInRepoFlagRepository(t *testing.T) {
	lib := func(names ...string) map[string]any {
		return map[string]any{"repo": "octo/lib", "number": 3, "labels": names}
	}
	add, remove := contract.ToolAddLabels, contract.ToolRemoveLabels
	cases := []struct {
		name    string
		flags   string
		blocked string
		tool    string
		args    map[string]any
		want    string // decision
		rule    string
		says    string
	}{
		{"added", "repo=octo/app repo=octo/lib", "", add, lib("DOCS"), DecisionAllowed, "", "will be added to octo/lib#3"},
		{"removed", "repo=octo/lib", "", remove, lib("bug"), DecisionAllowed, "", "octo/lib#3"},
		{"a label the repository lacks", "repo=octo/app repo=octo/lib", "", add, lib("needs-triage"), DecisionDenied, outputs.RuleNoSuchLabel, `octo/lib has no label "needs-triage"`},
		{"labels not readable", "repo=octo/app repo=octo/secret", "", add,
			map[string]any{"repo": "octo/secret", "number": 1, "labels": []string{"bug"}}, DecisionDenied, outputs.RuleLabelsUnknown,
			"the labels of octo/secret were not readable when the mention was read (not readable by the bot (HTTP 403))"},
		{"never gathered", "repo=octo/app repo=octo/other", "", add,
			map[string]any{"repo": "octo/other", "number": 1, "labels": []string{"bug"}}, DecisionDenied, outputs.RuleLabelsUnknown, "does not know the labels of octo/other"},
		{"no repo= naming it", "", "", add, lib("docs"), DecisionDenied, policy.RuleNotHere, "or in a repository a repo= flag names"},
		{"repo= names another", "repo=octo/app", "", add, lib("docs"), DecisionDenied, policy.RuleRepoNotAllowed, "writes are allowed only to octo/app"},
		{"deny=", "repo=octo/lib deny=octo/lib", "", add, lib("docs"), DecisionDenied, policy.RuleRepoDenied, "deny=octo/lib"},
		{"opted out", "repo=octo/lib", "octo/lib", add, lib("docs"), DecisionDenied, policy.RuleRepoBlocked, `opt-out entry "octo/lib"`},
		{"comment-only", "repo=octo/lib comment-only", "", add, lib("docs"), DecisionDenied, policy.RuleCommentOnly, "comment-only"},
		{"here-only", "repo=octo/lib here-only", "", remove, lib("docs"), DecisionDenied, policy.RuleHereOnly, "here-only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig(t)
			if tc.flags != "" {
				cfg = withFlags(t, cfg, tc.flags)
			}
			// as the agent job builds the gate's config from the context
			cfg.Labels, cfg.LabelsMissing = job.Labels([]byte(repoFlagContext))
			if tc.blocked != "" {
				cfg.Blocklist = blockedList(tc.blocked)
			}
			runSteps(t, cfg, []step{{tc.tool, tc.args, tc.want, tc.rule, tc.says}})
			es := readOutputs(t, cfg)
			if tc.want != DecisionAllowed {
				assert.Empty(t, es)
				return
			}
			if assert.Len(t, es, 1) {
				assert.Equal(t, "octo/lib", es[0].Repo)
				assert.Equal(t, policy.KindLabels, es[0].Kind)
			}
		})
	}
}
