package publish

import (
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublishCommentAndIssue(t *testing.T) {
	f := newFixture(t, "")
	f.add(f.comment(testTarget, f.issue, "Here is the fix."))
	f.add(f.newIssue(testOther, "Follow-up"))
	res := f.run(f.options())

	assert.Equal(t, "completed", res.Status)
	assert.Empty(t, res.Refused)
	require.Len(t, res.Written, 2)
	cs := f.botComments(testTarget, f.issue)
	require.Len(t, cs, 1)
	assert.Contains(t, cs[0].GetBody(), "Here is the fix.")
	assert.Contains(t, cs[0].GetBody(), render.NoteBlock(testControl, f.logIssue, testBot))
	job, idx, ok := contract.ParseOutputMarker(cs[0].GetBody())
	require.True(t, ok)
	assert.Equal(t, res.JobID, job)
	assert.Equal(t, 0, idx)
	is := f.botIssues(testOther)
	require.Len(t, is, 1)
	assert.Equal(t, "Follow-up", is[0].GetTitle())

	log := f.log()
	assert.Equal(t, "closed", log.GetState())
	assert.Equal(t, "completed", log.GetStateReason())
	assert.Equal(t, render.Tracking{
		Comments: []string{cs[0].GetHTMLURL()},
		Issues:   []string{testOther + "#1"},
		Repos:    []string{testTarget, testOther},
	}, f.tracking())
	assert.Empty(t, f.sim.Reactions(testTarget, f.trigger.GetID()), "the answer on the thread says it finished: no 🚀")
	// the session went to the log issue as a comment
	logComments := f.botComments(testControl, f.logIssue)
	require.Len(t, logComments, 1)
	assert.Contains(t, logComments[0].GetBody(), "## Session")
}
