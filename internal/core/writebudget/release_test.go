package writebudget_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// TestUnusedSlotsGivenBack: a process done writing gives back the slots it
// did not use, so the account's hour is not spent on writes never made;
// another process takes them at once instead of waiting the hour out.
func TestUnusedSlotsGivenBack(t *testing.T) { eachPath(t, testUnusedSlotsGivenBack) }

func testUnusedSlotsGivenBack(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 80, PerHour: 20, Block: 8}
	a, b := w.ledger(t, "a", o), w.ledger(t, "b", o)
	require.NoError(t, a.Take(ctx)) // one write of a grant of 8
	require.NoError(t, a.Release(ctx))
	assert.Equal(t, 7, a.Returned())
	assert.Equal(t, []int{1}, w.ledgerGrants(t, ctx))
	start := w.clk.Now()
	for i := 0; i < 16; i++ {
		require.NoError(t, b.Take(ctx))
	}
	assert.Equal(t, start, w.clk.Now(), "1 + 16 writes fit the hour of 20: no wait")
	assert.Equal(t, []int{1, 8, 8}, w.ledgerGrants(t, ctx))

	// nothing to give back: no write
	require.NoError(t, b.Release(ctx))
	assert.Zero(t, b.Returned())
}

// TestReleaseWorthItsCost: a process whose ledger writes are the account's
// own gives slots back only when that frees more than the write costs; its
// next grant gives back an expired grant's slots for nothing.
func TestReleaseWorthItsCost(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	l := w.ledger(t, "d", writebudget.Options{Block: 4, SelfCost: 2, Hold: 10 * time.Second})
	for i := 0; i < 2; i++ {
		require.NoError(t, l.Take(ctx))
	}
	w.sim.ResetRequests()
	require.NoError(t, l.Release(ctx))
	assert.Empty(t, w.sim.Requests(), "2 unused slots are not worth a write of 2")
	require.NoError(t, l.Take(ctx)) // the next grant carries the give-back
	assert.Equal(t, []int{4, 6}, w.ledgerGrants(t, ctx), "6 - 2 unused; then 4 + 2")
	assert.Equal(t, 2, l.Returned())
	for i := 0; i < 3; i++ {
		require.NoError(t, l.Take(ctx))
	}
	// all 4 slots of the second grant used: nothing to give back
	w.clk.Advance(time.Minute)
	require.NoError(t, l.Release(ctx))
	assert.Equal(t, []int{4, 6}, w.ledgerGrants(t, ctx))
}
