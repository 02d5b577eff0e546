package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// TestPublishRefusesControlUnderOldName: a comment queued on an old name
// of the control repository (GitHub redirects it there) is refused by id,
// and two old names of the target share one comment-limit count.
func TestPublishRefusesControlUnderOldName(t *testing.T) {
	f := newFixture(t, "comment-limit=1")
	require.NoError(t, f.sim.AddRepoRedirect("ops/old-control", testControl))
	require.NoError(t, f.sim.AddRepoRedirect("acme/old1", testTarget))
	require.NoError(t, f.sim.AddRepoRedirect("acme/old2", testTarget))
	f.add(f.comment("ops/old-control", f.logIssue, "into the control repo")) // 0
	f.add(f.comment("acme/old1", f.issue, "first"))                          // 1 allowed
	f.add(f.comment("acme/old2", f.issue, "second"))                         // 2 comment-limit
	res := f.run(f.options())

	got := map[int]string{}
	for _, r := range res.Refused {
		got[r.Index] = r.Rule
	}
	assert.Equal(t, map[int]string{0: policy.RuleControlRepo, 2: policy.RuleCommentLimit}, got)
	require.Len(t, res.Written, 1)
	assert.Len(t, f.botComments(testTarget, f.issue), 1)
	for _, c := range f.botComments(testControl, f.logIssue) {
		assert.NotContains(t, c.GetBody(), "into the control repo")
	}
}
