package writebudget_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// TestGuessedGrants: a handle with Guess commits its grants on the head it
// wrote last, without reading the ledger (a commit and a ref update: two
// requests); once another process wrote, its guess loses the swap, it
// reads, pays the lost writes in its next grant and reads first until the
// ledger stayed as it left it distrust+1 times. No grant is lost.
func TestGuessedGrants(t *testing.T) { eachPath(t, testGuessedGrants) }

func testGuessedGrants(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{Block: 1, SelfCost: 2, Guess: true}
	a := w.ledger(t, "a", o)
	o.Guess = false
	b := w.ledger(t, "b", o)
	// grant takes one grant with l (Block 1: every Take is a grant) and
	// returns its requests: ledger reads, and all
	grant := func(l *writebudget.Ledger) (reads, all int) {
		w.sim.ResetRequests()
		require.NoError(t, l.Take(ctx))
		for _, r := range w.sim.Requests() {
			if r.Method == http.MethodGet && strings.Contains(r.Path, "/git/matching-refs/") {
				reads++
			}
		}
		return reads, len(w.sim.Requests())
	}
	own := w.own() // requests (and writes) of one ledger update
	reads, all := grant(a)
	assert.Equal(t, [2]int{2, 2 + own}, [2]int{reads, all}, "the first grant reads, creates and checks the ledger")
	for i := 0; i < 3; i++ {
		reads, all = grant(a)
		assert.Equal(t, [2]int{0, own}, [2]int{reads, all}, "then a commit on the head it wrote, and the ref moved")
	}
	assert.Equal(t, 3, a.Guesses())
	for i := 0; i < 2; i++ {
		reads, _ = grant(b)
		assert.Equal(t, 1, reads, "a handle without Guess always reads")
	}

	// b moved the ledger: a's guess loses, a reads and takes its grant
	reads, all = grant(a)
	assert.Equal(t, [2]int{1, 2 + 2*own}, [2]int{reads, all}, "refused update, read (b's ref and commit), update")
	_, lost, _ := a.Stats()
	assert.Equal(t, 1, lost)
	var got []int
	for i := 0; i < 5; i++ {
		reads, _ = grant(a)
		got = append(got, reads)
	}
	assert.Equal(t, []int{1, 1, 1, 1, 0}, got, "reads until the ledger stayed as a left it 4 times")
	assert.Equal(t, 4, a.Guesses())

	_, msg := w.ledgerNow(t, ctx)
	sizes := writebudget.GrantSizes(msg)
	assert.Len(t, sizes, 4+2+1+5, "every grant is in the ledger")
	assert.Contains(t, sizes, 1+own+own, "the lost guess's writes are paid by the grant after it")
	assert.Equal(t, len(sizes)*(1+own)+own, writebudget.CountGrants(msg))
}
