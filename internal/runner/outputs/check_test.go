package outputs

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// CheckFacts judges a label change by the labels of its own repository:
// the thread's, or one repo= names whose labels the context holds.
func TestCheckFactsLabelsByRepository(t *testing.T) {
	facts := Facts{
		Here: policy.Thread{Repo: "octo/app", Number: 7},
		Labels: map[string][]string{
			"octo/app": {"needs-triage"},
			"octo/lib": {"docs", "Good First Issue"},
		},
		LabelsMissing: map[string]string{"octo/secret": "not readable by the bot (HTTP 404)"},
	}
	label := func(repo string, names ...string) Entry {
		return Entry{Kind: policy.KindLabels, Repo: repo, Number: 3, Labels: names}
	}
	cases := []struct {
		name  string
		entry Entry
		facts Facts
		rule  string // "" = passes
		says  string
	}{
		{"a repo= repository's label", label("octo/lib", "docs"), facts, "", ""},
		{"matched ignoring case, repository name too", label("Octo/Lib", "good first issue"), facts, "", ""},
		{"removal checked the same way", Entry{Kind: policy.KindLabels, Repo: "octo/lib", Number: 3, Labels: []string{"docs"}, Remove: true}, facts, "", ""},
		{"a label only the thread's repository has", label("octo/lib", "needs-triage"), facts, RuleNoSuchLabel, `octo/lib has no label "needs-triage"`},
		{"one missing label among good ones", label("octo/lib", "docs", "wontfix"), facts, RuleNoSuchLabel, `"wontfix"`},
		{"labels not readable", label("octo/secret", "bug"), facts, RuleLabelsUnknown,
			"the labels of octo/secret were not readable when the mention was read (not readable by the bot (HTTP 404))"},
		{"never gathered", label("octo/other", "bug"), facts, RuleLabelsUnknown, "does not know the labels of octo/other"},
		{"no triage role on the thread's repository does not reach another",
			label("octo/lib", "docs"), Facts{Here: facts.Here, Labels: facts.Labels, NoTriage: true}, "", ""},
		{"no triage role on the thread's repository", label("octo/app", "needs-triage"),
			Facts{Here: facts.Here, Labels: facts.Labels, NoTriage: true}, RuleNoTriage, "triage role on octo/app"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := CheckFacts(tc.entry, tc.facts, policy.Policy{LabelLimit: 5})
			if tc.rule == "" {
				assert.Nil(t, inv)
				return
			}
			if assert.NotNil(t, inv) {
				assert.Equal(t, tc.rule, inv.Rule)
				assert.Contains(t, inv.Reason, tc.says)
			}
		})
	}
}
