package writebudget_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// TestLedgerHour: Hour counts the grants of the hour in the ledger as the
// handle last read or wrote it, another process's included once it has
// read them, without a request of its own; they age out after an hour,
// and limits committed to the ledger replace the handle's own.
func TestLedgerHour(t *testing.T) { eachPath(t, testLedgerHour) }

func testLedgerHour(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 12, PerHour: 40, Block: 3, Hold: time.Minute, SelfCost: 2}
	a, b := w.ledger(t, "a", o), w.ledger(t, "b", o)
	type hour struct{ used, limit int }
	at := func(l *writebudget.Ledger) hour {
		used, limit, ok := l.Hour()
		require.True(t, ok, "the ledger was seen")
		return hour{used, limit}
	}
	_, _, ok := a.Hour()
	assert.False(t, ok, "nothing seen yet")

	inLedger := func() int { _, msg := w.ledgerNow(t, ctx); return writebudget.CountGrants(msg) }
	require.NoError(t, a.Take(ctx))
	grant := 3 + w.own()
	assert.Equal(t, hour{grant, 40}, at(a), "a grant of 3 and the ledger's own writes")
	require.NoError(t, b.Take(ctx))
	assert.Equal(t, hour{2 * grant, 40}, at(b))
	w.sim.ResetRequests()
	assert.Equal(t, hour{grant, 40}, at(a), "b's grant is not seen before a reads the ledger again")
	assert.Empty(t, w.sim.Requests(), "Hour makes no request")
	for range 3 {
		require.NoError(t, a.Take(ctx)) // the third needs a's next grant
	}
	assert.Greater(t, at(a).used, 2*grant, "b's grant and a's next")
	assert.Equal(t, hour{inLedger(), 40}, at(a), "what the ledger holds")

	w.clk.Advance(time.Hour + time.Second)
	assert.Equal(t, hour{0, 40}, at(a), "the grants aged out")
	require.NoError(t, a.SetLimits(ctx, 20, 30))
	assert.Equal(t, hour{0, 30}, at(a), "the limits committed to the ledger")
}

// TestLedgerRefresh: a handle that writes little sees other processes'
// grants after Refresh, in one request (the ledger at the hour's name).
func TestLedgerRefresh(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 12, PerHour: 40, Block: 3, Hold: time.Minute, SelfCost: 2}
	a, b := w.ledger(t, "a", o), w.ledger(t, "b", o)
	require.NoError(t, a.Take(ctx))
	require.NoError(t, b.Take(ctx))
	before, _, _ := a.Hour()
	seen := a.SeenAt()
	w.clk.Advance(time.Minute)
	w.sim.ResetRequests()
	require.NoError(t, a.Refresh(ctx))
	after, _, ok := a.Hour()
	require.True(t, ok)
	assert.Equal(t, before+5, after, "b's grant of 3 and its ledger write of 2")
	assert.True(t, a.SeenAt().After(seen))
	assert.LessOrEqual(t, len(w.sim.Requests()), 2)
	for _, r := range w.sim.Requests() {
		assert.Equal(t, "GET", r.Method, "a refresh only reads")
	}
}
