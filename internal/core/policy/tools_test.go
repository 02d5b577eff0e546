package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

func TestTools(t *testing.T) {
	here := Thread{Repo: "o/n", Number: 3}
	verdicts := func(line string, c Ceilings, isPR bool) map[string]ToolVerdict {
		var f Flags
		if line != "" {
			var err error
			f, err = ParseFlagLine(line)
			require.NoError(t, err)
		}
		out := map[string]ToolVerdict{}
		for _, v := range Effective(f, c, here, nil).Tools(isPR) {
			out[v.Tool] = v
		}
		return out
	}
	cases := []struct {
		name, line string
		c          Ceilings
		isPR       bool
		tool       string
		allowed    bool
		why        string
	}{
		{"review on a PR", "", DefaultCeilings(), true, contract.ToolCreateReview, true, "on o/n#3 only, event COMMENT"},
		{"review on an issue", "", DefaultCeilings(), false, contract.ToolCreateReview, false, "issue, not a pull request"},
		{"review under here-only", "here-only", DefaultCeilings(), true, contract.ToolCreateReview, true, "at most 30 inline comments"},
		{"labels by default", "", DefaultCeilings(), false, contract.ToolAddLabels, true, "at most 5 label changes"},
		{"labels under comment-only", "comment-only", DefaultCeilings(), false, contract.ToolRemoveLabels, false, "a label is not a comment"},
		{"labels with label-limit 0", "", Ceilings{CommentLimit: 1, MaxWrites: 1}, false, contract.ToolAddLabels, false, "label-limit is 0"},
		{"issues under no-issue", "no-issue", DefaultCeilings(), false, contract.ToolCreateIssue, false, "issue-limit is 0 (no-issue"},
		{"noop", "here-only", DefaultCeilings(), false, contract.ToolNoop, true, "always"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, ok := verdicts(c.line, c.c, c.isPR)[c.tool]
			require.True(t, ok, "%s listed", c.tool)
			assert.Equal(t, c.allowed, v.Allowed, v.Why)
			assert.Contains(t, v.Why, c.why)
		})
	}
	for _, v := range Effective(Flags{}, DefaultCeilings(), here, nil).Tools(true) {
		assert.Contains(t, contract.GateTools, v.Tool, "only tools the gate serves")
	}
}
