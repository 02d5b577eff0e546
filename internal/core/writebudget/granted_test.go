package writebudget_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// TestGrantedIsTheLatestGrantsCommit: Granted waits for a grant when none
// is held (taking one, or the one Ready takes) until its commit is made
// and returns that commit, dated by the ledger's clock and naming the handle's holder;
// with slots held it returns at once, and the next grant's commit follows.
func TestGrantedIsTheLatestGrantsCommit(t *testing.T) {
	eachPath(t, testGrantedIsTheLatestGrantsCommit)
}

func testGrantedIsTheLatestGrantsCommit(t *testing.T, w *world) {
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{Block: 8})
	g, ok, err := l.Granted(ctx)
	require.NoError(t, err)
	require.True(t, ok, "no slot held: a grant is taken")
	// Granted returned once the grant's commit was made; Ready waits for
	// the grant being recorded
	require.NoError(t, l.Ready(ctx, 1))
	grants, _, _ := l.Stats()
	assert.Equal(t, 1, grants)
	assert.Equal(t, "a", g.Holder)
	assert.Equal(t, w.clk.Now().UTC().Truncate(time.Second), g.At)
	refs, msg := w.ledgerNow(t, ctx)
	require.Len(t, refs, 1)
	c, _, err := w.gh.Git.GetCommit(ctx, "ops", "control", g.Commit)
	require.NoError(t, err)
	assert.Equal(t, msg, c.GetMessage(), "the ledger's head is the grant's commit")
	assert.Equal(t, g.At, c.GetCommitter().GetDate().Time.UTC())

	w.sim.ResetRequests()
	again, ok, err := l.Granted(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, g, again)
	assert.Empty(t, w.sim.Requests(), "slots held: no request")

	w.clk.Advance(20 * time.Second) // the grant expired
	require.NoError(t, l.Ready(ctx, 4))
	next, ok, err := l.Granted(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.NotEqual(t, g.Commit, next.Commit)
	assert.True(t, next.At.After(g.At))
}

// TestOwnGrantsOnce: one user of a handle may claim with its grants.
func TestOwnGrantsOnce(t *testing.T) { eachPath(t, testOwnGrantsOnce) }

func testOwnGrantsOnce(t *testing.T, w *world) {
	l := w.ledger(t, "a", writebudget.Options{})
	assert.True(t, l.OwnGrants())
	assert.False(t, l.OwnGrants())
}
