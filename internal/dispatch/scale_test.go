package dispatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/threadctx"
)

func truncationOf(t *testing.T, m map[string]json.RawMessage) threadctx.Truncation {
	var tr threadctx.Truncation
	require.NoError(t, json.Unmarshal(m["truncation"], &tr))
	return tr
}

func TestLongThreadTruncatedWithinBudget(t *testing.T) {
	e := newEnv(t)
	e.sim.SetRequestLogLimit(0)
	n := e.issue("a long thread")
	filler := strings.Repeat("words and more words ", 30)
	for i := 0; i < 2000; i++ {
		e.comment(n, "bob", fmt.Sprintf("comment %d %s", i, filler))
	}
	c := e.comment(n, "alice", "@mrbot summarise")
	e.comment(n, "bob", "posted after the trigger")
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.Greater(t, dec.Dispatches, 1, "sharded")
	m := e.contexts()[dec.JobID]
	assert.LessOrEqual(t, len(e.rawContexts()[dec.JobID]), threadctx.DefaultMaxBytes)
	tr := truncationOf(t, m)
	assert.Equal(t, 2002, tr.CommentsTotal)
	assert.Len(t, tr.AfterTriggerIDs, 1)
	assert.Equal(t, tr.CommentsTotal-1-len(tr.DroppedIDs), tr.CommentsKept)
	var kept []struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
	}
	require.NoError(t, json.Unmarshal(m["comments"], &kept))
	assert.Equal(t, c.GetID(), kept[len(kept)-1].ID, "the trigger is kept, last")
	assert.Contains(t, kept[0].Body, "comment 0 ", "the oldest is kept")
	assert.Contains(t, kept[len(kept)-2].Body, "comment 1999 ", "the newest are kept")
}

func TestHugeDiffCappedAndSharded(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		fmt.Fprintf(&b, "diff --git a/f%d b/f%d\n+%s\n", i, i, strings.Repeat("x", 200))
	}
	pr := e.pr("@mrbot review the big one", b.String())
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("pull_request", pr, 0))
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.Greater(t, dec.Dispatches, 10)
	for _, d := range e.sim.Dispatches(control) {
		assert.Equal(t, contract.EventAgentShard, d.EventType)
		assert.Less(t, len(d.Body), contract.DispatchBodyBytes)
	}
	m := e.contexts()[dec.JobID]
	tr := truncationOf(t, m)
	assert.True(t, tr.DiffTruncated)
	assert.Equal(t, int64(b.Len()), tr.DiffBytesTotal)
	var diff string
	require.NoError(t, json.Unmarshal(m["diff"], &diff))
	assert.LessOrEqual(t, len(diff), threadctx.DefaultMaxDiffBytes)
	assert.True(t, strings.HasPrefix(b.String(), diff) && strings.HasSuffix(diff, "\n"), "a prefix cut at a line end")
}

// TestRequestCost measures what one mention costs in API requests besides
// the dispatches, once the per-cycle reads (blocklist, rate state, control
// branch) are cached: at most 5 for an issue, 8 for a pull request.
func TestRequestCost(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher()
	warm := e.issue("warm")
	c := e.comment(warm, "alice", "@mrbot warm up the caches")
	_, err := d.Handle(e.ctx(), e.trigger("issue_comment", warm, c.GetID()))
	require.NoError(t, err)

	n := e.issue("x")
	c = e.comment(n, "alice", "@mrbot do it")
	trig := e.trigger("issue_comment", n, c.GetID())
	e.sim.ResetRequests()
	dec, err := d.Handle(e.ctx(), trig)
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision)
	issueReqs := e.requestsExcept("/dispatches")
	t.Logf("issue mention: %d requests: %v", len(issueReqs), issueReqs)
	assert.LessOrEqual(t, len(issueReqs), 5)

	pr := e.pr("@mrbot review", "")
	trig = e.trigger("pull_request", pr, 0)
	e.sim.ResetRequests()
	dec, err = d.Handle(e.ctx(), trig)
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision)
	prReqs := e.requestsExcept("/dispatches")
	t.Logf("PR mention: %d requests: %v", len(prReqs), prReqs)
	assert.LessOrEqual(t, len(prReqs), 10) // incl. the claim's create and its mark as dispatched

	// Cold, with the per-cycle reads and the end-of-cycle write.
	e2 := newEnv(t)
	n = e2.issue("x")
	c = e2.comment(n, "alice", "@mrbot do it")
	trig = e2.trigger("issue_comment", n, c.GetID())
	d2 := e2.dispatcher()
	e2.sim.ResetRequests()
	_, err = d2.Handle(e2.ctx(), trig)
	require.NoError(t, err)
	require.NoError(t, d2.Flush(e2.ctx()))
	cold := e2.requestsExcept("/dispatches")
	t.Logf("cold issue mention incl. cycle overhead: %d requests: %v", len(cold), cold)
}
