package writebudget_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// TestPushedUpdateIsOneWrite: pushed, a ledger update is one request and
// one content write of the account that writes it, a generation's
// creation too; the grant pays for that one write.
func TestPushedUpdateIsOneWrite(t *testing.T) {
	w := newWorld(t)
	w.push = true
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{Block: 2, SelfCost: 2})
	for i := 0; i < 3; i++ {
		takeIdle(t, ctx, l) // creates generation 1
		takeIdle(t, ctx, l) // a slot of the same grant
	}
	assert.Len(t, w.sim.ContentWrites()["ops"], 3, "three grants, one push each")
	_, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []int{3, 3, 3}, writebudget.GrantSizes(msg), "each grant: 2 slots and its push")
}

// TestPushedLostAnswers: a push whose answer is lost (a 502, a reset, a
// hang) after it was applied, or before, for an update and for a
// generation's creation. The handle reads the ledger back: every grant
// it holds is in the ledger exactly once, and it loses none.
func TestPushedLostAnswers(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		for _, applied := range []bool{true, false} {
			for _, create := range []bool{true, false} {
				name := fmt.Sprintf("%s/applied=%v/create=%v", kind, applied, create)
				t.Run(name, func(t *testing.T) {
					w := newWorld(t)
					w.push = true
					ctx := ctxT(t)
					if !create {
						takeIdle(t, ctx, w.ledger(t, "seed", writebudget.Options{Block: 1}))
					}
					w.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: kind, OnCall: 1,
						AfterApply: applied, Delay: 2 * time.Second})
					// the pushes sent, counted as they leave (a hung one is
					// in the simulator's log only once it ends)
					var pushes atomic.Int32
					hc := w.gh.Client()
					hc.Transport = countPushes{next: hc.Transport, n: &pushes}
					var err error
					o := writebudget.Options{Block: 2, SelfCost: 2}
					o.Push, err = refpush.New(hc, w.base, "tok")
					require.NoError(t, err)
					o.Push.Timeout = time.Second // the hang's answer is given up on before it comes
					l := w.ledger(t, "a", o)
					takeIdle(t, ctx, l)
					takeIdle(t, ctx, l)
					want := int32(1) // the lost answer's push, found applied
					if !applied {
						want = 2 // not applied: pushed again
					}
					assert.Equal(t, want, pushes.Load())
					grants, _, _ := l.Stats()
					assert.Equal(t, 1, grants, "one grant held")
					_, msg := w.ledgerNow(t, ctx)
					assert.Equal(t, 1, writebudget.GrantsBy(msg, l.ID()), "in the ledger once: not lost, not doubled")
				})
			}
		}
	}
}

// countPushes counts the pushes sent through it.
type countPushes struct {
	next http.RoundTripper
	n    *atomic.Int32
}

func (c countPushes) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// TestPushedGrantsRace: processes pushing grants at once: each push is a
// compare-and-swap, so of two on one head one is refused and its process
// reads again; the ledger ends with every grant, each once.
func TestPushedGrantsRace(t *testing.T) {
	w := newWorld(t)
	w.push = true
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 10000, PerHour: 100000, Block: 1, SelfCost: 2}
	ls := make([]*writebudget.Ledger, 3)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range ls {
		ls[i] = w.ledger(t, fmt.Sprintf("p%d", i), o)
		wg.Go(func() {
			<-start
			for range 4 {
				assert.NoError(t, ls[i].Take(ctx))
			}
		})
	}
	close(start)
	wg.Wait()
	_, msg := w.ledgerNow(t, ctx)
	lost := 0
	for i, l := range ls {
		g, cas, _ := l.Stats()
		lost += cas
		assert.Equal(t, 4, g)
		assert.Equal(t, 4, writebudget.GrantsBy(msg, l.ID()), "p%d's grants in the ledger, each once", i)
	}
	// every push, won or refused, is one write of the account; the lost
	// ones are paid by their process's next grant
	assert.Len(t, w.sim.ContentWrites()["ops"], 12+lost)
	assert.Equal(t, 12*2+lost, writebudget.CountGrants(msg), "each grant's slot and push, and every refused push")
}

// TestPushedGrantAnnouncedWhenApplied: a pushed grant's commit exists
// only once its push is applied, so Granted does not return it before
// (a claim ref pointing at it would be refused), and a write marked
// OnCredit waits for the grant like any other; after, the commit is there.
func TestPushedGrantAnnouncedWhenApplied(t *testing.T) {
	w := newWorld(t)
	w.push = true
	ctx := ctxT(t)
	require.NoError(t, w.ledger(t, "c", writebudget.Options{Block: 8}).Take(ctx)) // the ledger exists
	var a *writebudget.Ledger
	var early bool
	hook := func() { // before a's push
		gctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, _, err := a.Granted(gctx)
		early = err == nil
		assert.False(t, takeSoon(t, writebudget.OnCredit(ctx), a, 200*time.Millisecond), "no write on credit")
	}
	a = w.ledger(t, "a", writebudget.Options{Block: 4, SelfCost: 2, Client: hooked(w.gh, hook)})
	require.NoError(t, a.Ready(ctx, 4))
	assert.False(t, early, "no commit to name before the push is applied")
	g, ok, err := a.Granted(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	c, _, err := w.gh.Git.GetCommit(ctx, "ops", "control", g.Commit)
	require.NoError(t, err, "the grant's commit is in the repository")
	assert.Equal(t, 1, writebudget.GrantsBy(c.GetMessage(), a.ID()))
	for range 4 {
		require.NoError(t, a.Take(ctx))
	}
	grants, _, _ := a.Stats()
	assert.Equal(t, 1, grants, "all 4 slots were the grant's")
}

// TestLedgerAcrossUpgrade: a ledger an older dispatcher or publish wrote
// through the REST API (a commit, then the ref) is carried on by a
// process that pushes, and while both run (a rolling upgrade) they share
// it: every grant of either is in the ledger, in the order taken, and the
// pushes are one write each.
func TestLedgerAcrossUpgrade(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	old := w.ledger(t, "old", writebudget.Options{Block: 1, SelfCost: 2}) // w.push unset: REST
	takeIdle(t, ctx, old)
	takeIdle(t, ctx, old)
	w.push = true
	upgraded := w.ledger(t, "new", writebudget.Options{Block: 1, SelfCost: 2})
	before := len(w.sim.ContentWrites()["ops"])
	takeIdle(t, ctx, upgraded)
	assert.Equal(t, 1, len(w.sim.ContentWrites()["ops"])-before, "the upgraded grant: one push on the REST-written ledger")
	takeIdle(t, ctx, old) // the older process, still running, writes on top of the push
	takeIdle(t, ctx, upgraded)
	_, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []int{3, 3, 2, 3, 2}, writebudget.GrantSizes(msg), "REST grants pay 2 for the ledger, pushed ones 1")
}

// TestLedgerWhenPushesRefused: a server that refuses pushes as such gets
// the ledger's updates through the REST API (refpush.ForAPI's fall back):
// grants are still taken, on one ledger, each a commit and a ref update.
func TestLedgerWhenPushesRefused(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	p, err := refpush.ForAPI(w.gh, "tok")
	require.NoError(t, err)
	w.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultText, Rate: 1})
	l := w.ledger(t, "a", writebudget.Options{Block: 1, Push: p, SelfCost: writebudget.UpdateCost(p)})
	for range 3 {
		takeIdle(t, ctx, l)
	}
	_, msg := w.ledgerNow(t, ctx)
	// the first grant was priced for a push (1 slot + 1) before the push
	// was refused; the later ones for the REST API's two writes
	assert.Equal(t, []int{2, 3, 3}, writebudget.GrantSizes(msg), "three grants on the ledger")
	pushes := 0
	for _, r := range w.sim.Requests() {
		if strings.HasSuffix(r.Path, "/git-receive-pack") {
			pushes++
		}
	}
	assert.Equal(t, 1, pushes, "the refused push, then the REST API")
}
