package writebudget_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// ledgerGrants returns the grant sizes (slots + the ledger's own cost) the
// account's ledger lists, oldest first.
func (w *world) ledgerGrants(t *testing.T, ctx context.Context) []int {
	t.Helper()
	_, msg := w.ledgerNow(t, ctx)
	return writebudget.GrantSizes(msg)
}

// TestReadyTakesTheGrantAhead: Ready takes the grant the next writes use;
// with enough held it does nothing.
func TestReadyTakesTheGrantAhead(t *testing.T) { eachPath(t, testReadyTakesTheGrantAhead) }

func testReadyTakesTheGrantAhead(t *testing.T, w *world) {
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{Block: 8})
	require.NoError(t, l.Ready(ctx, 4))
	grants, _, _ := l.Stats()
	require.Equal(t, 1, grants)
	w.sim.ResetRequests()
	for i := 0; i < 4; i++ {
		require.NoError(t, l.Take(ctx))
	}
	assert.Empty(t, w.sim.Requests(), "the writes used the grant Ready took")
	require.NoError(t, l.Ready(ctx, 4))
	assert.Empty(t, w.sim.Requests(), "4 slots held: nothing to do")
	require.NoError(t, l.Ready(ctx, 5))
	grants, _, _ = l.Stats()
	assert.Equal(t, 2, grants, "fewer than 5 held: the next grant")
	// a grant about to expire does not count as held
	w.clk.Advance(14 * time.Second)
	require.NoError(t, l.Ready(ctx, 1))
	grants, _, _ = l.Stats()
	assert.Equal(t, 3, grants)
}

// TestReadySizesTheGrant: Ready's grant holds at least what it was asked
// for, up to MaxBlock.
func TestReadySizesTheGrant(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{Block: 4, MaxBlock: 10})
	for _, c := range []struct{ low, want int }{{7, 7}, {30, 10}, {2, 4}} {
		require.NoError(t, l.Ready(ctx, c.low))
		gs := w.ledgerGrants(t, ctx)
		assert.Equal(t, c.want, gs[len(gs)-1], "Ready(%d)", c.low)
		w.clk.Advance(time.Minute)
	}
}

// TestTakeWaitsForReady: a Take while Ready is taking a grant waits for
// that grant instead of taking one of its own, whichever starts first.
func TestTakeWaitsForReady(t *testing.T) {
	for i := 0; i < 10; i++ {
		w := newWorld(t)
		ctx := ctxT(t)
		l := w.ledger(t, "a", writebudget.Options{Block: 4})
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); assert.NoError(t, l.Ready(ctx, 2)) }()
		go func() { defer wg.Done(); assert.NoError(t, l.Take(ctx)) }()
		go func() { defer wg.Done(); assert.NoError(t, l.Take(ctx)) }()
		wg.Wait()
		grants, _, _ := l.Stats()
		assert.Equal(t, 1, grants, "round %d", i)
		assert.Equal(t, []int{4}, w.ledgerGrants(t, ctx))
	}
}

// TestGrantsGrowWhileBusy: a process that needs its next grant while the
// last still runs gets twice as many slots (up to MaxBlock); after letting
// slots expire it is back to Block.
func TestGrantsGrowWhileBusy(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{Block: 3, MaxBlock: 10, SelfCost: 2, Hold: 10 * time.Second})
	for i := 0; i < 3+6+10+10; i++ {
		require.NoError(t, l.Take(ctx))
		w.clk.Advance(100 * time.Millisecond)
	}
	assert.Equal(t, []int{5, 8, 12, 12}, w.ledgerGrants(t, ctx), "3, 6, 10, 10 slots, each +2 for the ledger's own writes")
	require.NoError(t, l.Take(ctx)) // one slot of a grant of 10
	w.clk.Advance(11 * time.Second) // the rest expire
	require.NoError(t, l.Take(ctx))
	assert.Equal(t, []int{5, 8, 12, 12, 3, 5}, w.ledgerGrants(t, ctx), "the expired grant's 9 unused slots given back with the next")

	// Fixed size without MaxBlock.
	w = newWorld(t)
	l = w.ledger(t, "a", writebudget.Options{Block: 3, SelfCost: 2, Hold: 10 * time.Second})
	for i := 0; i < 9; i++ {
		require.NoError(t, l.Take(ctx))
	}
	assert.Equal(t, []int{5, 5, 5}, w.ledgerGrants(t, ctx))
}

// TestReadyCancelled: a Ready whose caller gives up returns the context's
// error and leaves the ledger usable.
func TestReadyCancelled(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{})
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, l.Ready(cancelled, 1), context.Canceled)
	require.NoError(t, l.Take(ctx))
}

// TestReadySizesATakesGrant: a Take that started taking a grant before
// Ready was called (the first write of a process and its Ready, started
// together) takes the size Ready asks for, whichever comes first. The
// ledger's first read is held until Ready has asked (no timing involved).
func TestReadySizesATakesGrant(t *testing.T) {
	for _, readyFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "while Take's grant is being taken", true: "before Take"}[readyFirst], func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			gate := &firstRequestGate{arrived: make(chan struct{}), release: make(chan struct{})}
			gh, err := ghclient.New(ghclient.Options{BaseURL: w.base, Token: "tok", RetryUnsafe: true, Sleep: w.clk.Sleep, Now: w.clk.Now,
				RequestTimeout: 5 * time.Second, Base: gate})
			require.NoError(t, err)
			l := w.ledger(t, "a", writebudget.Options{Block: 4, MaxBlock: 12, Client: gh})
			if readyFirst {
				close(gate.release)
				require.NoError(t, l.Ready(ctx, 11))
				require.NoError(t, l.Take(ctx))
				assert.Equal(t, []int{11}, w.ledgerGrants(t, ctx))
				return
			}
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); assert.NoError(t, l.Take(ctx)) }()
			<-gate.arrived // Take's grant is being taken: its ledger read is held
			go func() { defer wg.Done(); assert.NoError(t, l.Ready(ctx, 11)) }()
			require.Eventually(t, func() bool { return writebudget.Wanted(l) == 11 }, 30*time.Second, time.Millisecond)
			close(gate.release)
			wg.Wait()
			assert.Equal(t, []int{11}, w.ledgerGrants(t, ctx))
		})
	}
}

// firstRequestGate holds the first request it carries until release is
// closed, and closes arrived when that request comes.
type firstRequestGate struct {
	arrived, release chan struct{}
	once             sync.Once
}

func (g *firstRequestGate) RoundTrip(r *http.Request) (*http.Response, error) {
	first := false
	g.once.Do(func() { first = true; close(g.arrived) })
	if first {
		select {
		case <-g.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}
