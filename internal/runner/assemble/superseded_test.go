package assemble

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventsAt encodes a context as dispatched at ts.
func eventsAt(t testing.TB, jobID string, context []byte, ts time.Time) [][]byte {
	t.Helper()
	reqs, err := transport.Encode(jobID, context, ts)
	require.NoError(t, err)
	var out [][]byte
	for _, r := range reqs {
		out = append(out, webhook(t, r.EventType, r.ClientPayload))
	}
	return out
}

var (
	tsA = time.Date(2025, 3, 1, 11, 59, 0, 0, time.UTC)
	tsB = tsA.Add(2 * time.Minute)
)

// redispatch is a job whose first dispatch (A, 4 shards) failed after two
// shards and was sent again later (B, 5 shards, other bytes).
type redispatch struct {
	jobID  string
	a, b   [][]byte
	bBytes []byte
}

func newRedispatch(t *testing.T, node string) redispatch {
	jobID := transport.JobID(node)
	a := eventsAt(t, jobID, contextFor(node, 170_000), tsA)
	cb := contextFor(node, 215_000)
	b := eventsAt(t, jobID, cb, tsB)
	require.Len(t, a, 4)
	require.Len(t, b, 5)
	return redispatch{jobID: jobID, a: a, b: b, bBytes: cb}
}

func assertSuperseded(t *testing.T, o outcome) {
	t.Helper()
	require.NoError(t, o.err, o.log)
	assert.True(t, o.res.Superseded)
	assert.Equal(t, "false", o.outputs["ready"])
	assert.Contains(t, o.log, "superseded by a newer dispatch of this job")
}

func TestRedispatchNewerWins(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			d := newRedispatch(t, fmt.Sprintf("IC_redispatch%d", seed))
			for _, ev := range d.a[:2] {
				o := h.run(t, ev)
				require.NoError(t, o.err, o.log)
			}
			order := rand.New(rand.NewPCG(seed, 7)).Perm(len(d.b))
			var out []outcome
			if seed == 0 {
				out = runConcurrently(t, h, d.b, order, 5)
			} else {
				out = runInOrder(t, h, d.b, order)
			}
			for _, o := range out {
				assert.False(t, o.res.Superseded, o.log)
			}
			assertOneProceeded(t, h, out, d.jobID, d.bBytes, "exactly one run proceeds")

			// A's remaining shards arrive late: they end cleanly, B is unaffected.
			for _, ev := range d.a[2:] {
				assertSuperseded(t, h.run(t, ev))
			}
			require.Len(t, h.sim.Issues(control), 1)
			is := h.sim.Issues(control)[0]
			assert.Empty(t, h.sim.Comments(control, is.GetNumber()), "no error recorded")
		})
	}
}

// A late piece of the old dispatch lands at an index the new one has not
// stored yet: it waits no one out, and the new dispatch still completes.
func TestRedispatchLateOldShardBeforeCompletion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d := newRedispatch(t, "IC_redispatch_late")
	for _, ev := range d.a[:2] {
		require.NoError(t, h.run(t, ev).err)
	}
	for i, ev := range d.b[:3] {
		o := h.run(t, ev)
		require.NoError(t, o.err, o.log)
		if i < 2 {
			assert.Contains(t, o.log, "replacing the piece of an older dispatch")
		}
	}
	assertSuperseded(t, h.run(t, d.a[3])) // stored at index 3, then found stale
	o := h.run(t, d.b[3])                 // replaces the stale index 3
	require.NoError(t, o.err, o.log)
	assert.False(t, o.res.Ready)
	assert.Equal(t, []int{4}, o.res.Missing)
	assertProceeded(t, h, h.run(t, d.b[4]), d.jobID, d.bBytes)
	assertSuperseded(t, h.run(t, d.a[2]))
}

// The old dispatch's pieces at indices the new one has too must not count:
// B's shards 0..3 with A's 0..1 replaced, and A's index 3 never sent.
func TestRedispatchOldPiecesDoNotComplete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	node := "IC_redispatch_count"
	jobID := transport.JobID(node)
	a := eventsAt(t, jobID, contextFor(node, 215_000), tsA) // 5 shards
	cb := contextFor(node, 216_000)
	b := eventsAt(t, jobID, cb, tsB)
	require.Len(t, a, 5)
	require.Len(t, b, 5)
	for _, ev := range a[2:] { // A stored 2, 3, 4
		require.NoError(t, h.run(t, ev).err)
	}
	require.False(t, h.run(t, b[0]).res.Ready)
	o := h.run(t, b[1]) // every index now has a ref, but B has only two
	require.NoError(t, o.err, o.log)
	assert.False(t, o.res.Ready)
	assert.Equal(t, []int{2, 3, 4}, o.res.Missing)
	assert.Contains(t, o.log, "pieces of an older dispatch do not count")
	for _, ev := range b[2:4] {
		require.False(t, h.run(t, ev).res.Ready)
	}
	assertProceeded(t, h, h.run(t, b[4]), jobID, cb)
}
