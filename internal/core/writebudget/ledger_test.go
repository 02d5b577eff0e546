package writebudget_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

type world struct {
	sim  *githubsim.Sim
	clk  *fakeclock.Clock
	gh   *github.Client
	base string
	rt   http.RoundTripper // the simulator in memory (a bubble's world); nil = over its socket
	// named: its handles use named generations (the default outside
	// tests); the tests written before them pin the sequential scheme.
	named bool
	// push: its handles push their updates (Options.Push, as every
	// process is wired) instead of writing them with the REST API.
	push bool
}

// tokens holds each test client's token, for its pusher.
var tokens sync.Map // *github.Client → string

// paths are the two ways a ledger update is written: a commit and a ref
// update with the REST API, or one push.
var paths = []struct {
	name string
	push bool
}{{"rest", false}, {"push", true}}

// eachPath runs f on a world of newWorld's, once per path.
func eachPath(t *testing.T, f func(t *testing.T, w *world)) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			w := newWorld(t)
			w.push = p.push
			f(t, w)
		})
	}
}

// own is what one ledger update costs the account writing it.
func (w *world) own() int {
	if w.push {
		return 1
	}
	return 2
}

// updateRequests are the requests of a ledger update of the ref named
// name (after refs/mention-runner/pace/), and createRequests of a
// generation's creation: one push, or a commit and the ref's write.
func (w *world) updateRequests(name string) []string {
	if w.push {
		return []string{"POST /ops/control.git/git-receive-pack"}
	}
	return []string{"POST /repos/ops/control/git/commits", "PATCH /repos/ops/control/git/refs/mention-runner/pace/" + name}
}

func (w *world) createRequests() []string {
	if w.push {
		return []string{"POST /ops/control.git/git-receive-pack"}
	}
	return []string{"POST /repos/ops/control/git/commits", "POST /repos/ops/control/git/refs"}
}

// pusher pushes to the simulator as token's account, through the
// transport of the client made for it (as the commands wire it).
func (w *world) pusher(t *testing.T, gh *github.Client) *refpush.Client {
	t.Helper()
	tok, ok := tokens.Load(gh)
	require.True(t, ok, "a client of w.client")
	p, err := refpush.New(gh.Client(), w.base, tok.(string))
	require.NoError(t, err)
	return p
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOn(t, fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
}

// newWorldOn is newWorld on clk.
func newWorldOn(t *testing.T, clk *fakeclock.Clock) *world {
	t.Helper()
	return newWorldWith(t, clk, false)
}

// newBubbleWorld is a world for processes that wait at once, in the
// testing/synctest bubble t runs in: the bubble's clock, moved on to at's
// time of day (a test near an hour's end), and the simulator in memory.
// Time moves only when every goroutine waits, so no process is caught
// between taking a slot and writing.
func newBubbleWorld(t *testing.T, at time.Time) *world {
	t.Helper()
	time.Sleep(at.Sub(at.Truncate(24 * time.Hour)))
	return newWorldWith(t, fakeclock.Bubble(), true)
}

// bubbleCtx bounds a bubble's test by its own clock: a hang is go test's
// timeout's, a deadlock the bubble's.
func bubbleCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 24*time.Hour)
	t.Cleanup(cancel)
	return ctx
}

// newWorldWith is newWorldOn, the simulator served in memory or on a
// socket.
func newWorldWith(t *testing.T, clk *fakeclock.Clock, inMemory bool) *world {
	t.Helper()
	sim, err := githubsim.New(githubsim.Options{Seed: 3, Now: clk.Now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	w := &world{sim: sim, clk: clk, base: sim.URL()}
	if inMemory {
		w.rt = githubsim.InMemory(sim.Handler())
	} else {
		w.base, err = sim.Start()
		require.NoError(t, err)
	}
	sim.AddUser("ops")
	sim.AddToken("tok", "ops")
	_, err = sim.AddRepo("ops/control", true)
	require.NoError(t, err)
	w.gh = w.client(t, "tok")
	return w
}

// client is a client of the simulator with token, on the world's clock.
func (w *world) client(t *testing.T, token string) *github.Client {
	t.Helper()
	gh, err := ghclient.New(ghclient.Options{BaseURL: w.base, Token: token, RetryUnsafe: true, Sleep: w.clk.Sleep, Now: w.clk.Now, RequestTimeout: 5 * time.Second, Base: w.rt})
	require.NoError(t, err)
	tokens.Store(gh, token)
	return gh
}

func (w *world) ledger(t *testing.T, holder string, o writebudget.Options) *writebudget.Ledger {
	t.Helper()
	if o.Client == nil {
		o.Client = w.gh
	}
	if w.push {
		// the tests' SelfCost 2 is "written as the account": a push is one write
		if o.Push == nil {
			o.Push = w.pusher(t, o.Client)
		}
		if o.SelfCost > 0 {
			o.SelfCost = writebudget.UpdateCost(o.Push)
		}
		if o.Fallback != nil {
			o.FallbackPush = w.pusher(t, o.Fallback)
			if o.FallbackCost > 0 {
				o.FallbackCost = writebudget.UpdateCost(o.FallbackPush)
			}
		}
	}
	o.Repo, o.Account, o.Holder, o.Now = "ops/control", "bot", holder, w.clk.Now
	if o.Sleep == nil {
		o.Sleep = w.clk.Sleep
	}
	o.Sequential = !w.named
	l, err := writebudget.New(o)
	require.NoError(t, err)
	return l
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestProcessesShareTheLimits: three processes taking writes in turn stay
// within the account's minute and hour however they interleave, counting
// the ledger's own writes when they are the account's.
func TestProcessesShareTheLimits(t *testing.T) { eachPath(t, testProcessesShareTheLimits) }

func testProcessesShareTheLimits(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 12, PerHour: 40, Block: 3, Hold: 5 * time.Second, SelfCost: 2}
	ls := []*writebudget.Ledger{w.ledger(t, "a", o), w.ledger(t, "b", o), w.ledger(t, "c", o)}
	var writes []time.Time
	for i := 0; i < 90; i++ {
		l := ls[(i*7/3)%3] // an uneven interleaving
		require.NoError(t, l.Take(ctx))
		writes = append(writes, w.clk.Now())
		w.clk.Advance(200 * time.Millisecond) // the write itself
	}
	total := 0
	for _, l := range ls {
		g, lost, _ := l.Stats()
		total += g
		assert.Zero(t, lost, "sequential: no lost compare-and-swap")
	}
	// each grant of 3 slots also counts the ledger's own writes
	// (SelfCost: 2 with the REST API, 1 pushed): at most 12/(3+SelfCost)
	// grants a minute, 3 slots each
	per := 3 + w.own()
	assert.LessOrEqual(t, githubsim.BusiestWindow(writes, time.Minute), 12*3/per)
	assert.LessOrEqual(t, githubsim.BusiestWindow(writes, time.Hour), 40*3/per)
	assert.GreaterOrEqual(t, total, 30, "grants of 3 slots")
}

// TestConcurrentGrantsNeverLost: processes racing for grants each win by
// compare-and-swap; the ledger ends with every grant any of them took.
func TestConcurrentGrantsNeverLost(t *testing.T) { eachPath(t, testConcurrentGrantsNeverLost) }

func testConcurrentGrantsNeverLost(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 10000, PerHour: 100000, Block: 1}
	var wg sync.WaitGroup
	ls := make([]*writebudget.Ledger, 4)
	for i := range ls {
		ls[i] = w.ledger(t, fmt.Sprintf("p%d", i), o)
		wg.Add(1)
		go func(l *writebudget.Ledger) {
			defer wg.Done()
			for k := 0; k < 5; k++ {
				assert.NoError(t, l.Take(ctx))
			}
		}(ls[i])
	}
	wg.Wait()
	total := 0
	for _, l := range ls {
		g, _, _ := l.Stats()
		total += g
	}
	assert.Equal(t, 20, total)
	// the ledger's last commit lists every grant
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, 20, writebudget.CountGrants(msg))
	assert.Equal(t, []string{contract.PaceGenRef("bot", 1)}, refs, "a new ledger starts at generation 1")
}

// TestSlowDownReachesEveryProcess: once one process records GitHub's
// slow-down, another's next grant starts after it.
func TestSlowDownReachesEveryProcess(t *testing.T) { eachPath(t, testSlowDownReachesEveryProcess) }

func testSlowDownReachesEveryProcess(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{Block: 2, Hold: 10 * time.Second}
	a, b := w.ledger(t, "a", o), w.ledger(t, "b", o)
	require.NoError(t, b.Take(ctx)) // b holds a grant of 2
	until := w.clk.Now().Add(time.Minute)
	require.NoError(t, a.SlowDown(ctx, until))
	require.NoError(t, b.Take(ctx)) // b's grant still had a slot
	require.NoError(t, b.Take(ctx)) // the next grant waits for the pause
	assert.False(t, w.clk.Now().Before(until), "b waited for the slow-down a was told")
	_, _, pauses := a.Stats()
	assert.Equal(t, 1, pauses)
	// a later, shorter slow-down does not shorten the pause
	require.NoError(t, a.SlowDown(ctx, until.Add(-time.Second)))
}

// TestSlowDownWhileAGrantWaits: a process whose next grant is waiting for
// room in the account's minute records a slow-down at once, not when that
// wait ends (holding the ledger's lock through the wait would tell the
// other processes of the pause up to a minute late); the waiting grant
// then starts after the pause, and Idle waits for it.
func TestSlowDownWhileAGrantWaits(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	waiting, release := make(chan time.Duration, 1), make(chan struct{})
	var gated sync.Once
	b := w.ledger(t, "b", writebudget.Options{PerMinute: 10, PerHour: 100, Block: 10, Hold: 5 * time.Second, Spare: -1})
	require.NoError(t, b.Take(ctx)) // b's grant fills the minute
	a := w.ledger(t, "a", writebudget.Options{PerMinute: 10, PerHour: 100, Block: 4, Hold: 5 * time.Second, Spare: -1,
		Sleep: func(ctx context.Context, d time.Duration) error {
			gated.Do(func() { // a's first wait (for room) lasts until the test says
				waiting <- d
				<-release
			})
			return w.clk.Sleep(ctx, d)
		}})
	took := make(chan error, 1)
	go func() { took <- a.Take(ctx) }()
	d := <-waiting
	assert.Greater(t, d, 50*time.Second, "a's grant waits for room")

	until := w.clk.Now().Add(5 * time.Minute)
	recorded := make(chan error, 1)
	go func() { recorded <- a.SlowDown(ctx, until) }()
	select {
	case err := <-recorded:
		require.NoError(t, err)
	case <-time.After(time.Minute): // a hang guard, not a timing: the wait never ends by itself
		close(release)
		t.Fatal("SlowDown waited for the grant's wait to end")
	}
	_, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, until.UnixMilli(), writebudget.PauseUntil(msg), "the pause is on the ledger while a's grant still waits")

	idle := make(chan int, 1)
	go func() {
		a.Idle()
		grants, _, _ := a.Stats()
		idle <- grants
	}()
	close(release)
	require.NoError(t, <-took)
	assert.False(t, w.clk.Now().Before(until), "the waiting grant read the ledger again and waited out the pause")
	assert.Equal(t, 1, <-idle, "Idle returned once the grant being taken was held")
}

// TestBrokenLedgerPacesAlone: a ledger that is not one (or cannot be
// read) warns and lets the process pace itself instead of stopping it.
func TestBrokenLedgerPacesAlone(t *testing.T) { eachPath(t, testBrokenLedgerPacesAlone) }

func testBrokenLedgerPacesAlone(t *testing.T, w *world) {
	ctx := ctxT(t)
	c, _, err := w.gh.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String("not a ledger"),
		Tree: &github.Tree{SHA: github.String("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}}, nil)
	require.NoError(t, err)
	_, _, err = w.gh.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(contract.PaceRef("bot")), Object: &github.GitObject{SHA: c.SHA}})
	require.NoError(t, err)
	var warned []error
	l := w.ledger(t, "a", writebudget.Options{Warn: func(err error) { warned = append(warned, err) }})
	require.NoError(t, l.Take(ctx))
	require.NoError(t, l.Take(ctx))
	require.Len(t, warned, 1, "warned once, then left alone for a while")
	assert.Contains(t, warned[0].Error(), "does not hold a write budget")
	assert.Contains(t, warned[0].Error(), "delete the ref")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	w.clk.Advance(2 * time.Minute)
	assert.True(t, errors.Is(l.Take(cancelled), context.Canceled), "a cancelled caller is not waved through")
}

func TestNewRefusesBadOptions(t *testing.T) {
	w := newWorld(t)
	for _, o := range []writebudget.Options{
		{Client: w.gh, Repo: "nope", Account: "bot"},
		{Client: w.gh, Repo: "ops/control"},
		{Client: w.gh, Repo: "ops/control", Account: "bot", PerMinute: 5, Block: 8},
	} {
		_, err := writebudget.New(o)
		assert.Error(t, err)
	}
}

// TestLimitsFromTheLedger: limits committed to the ledger (GitHub
// Enterprise Server's, a simulator's) replace every process's own.
func TestLimitsFromTheLedger(t *testing.T) { eachPath(t, testLimitsFromTheLedger) }

func testLimitsFromTheLedger(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{PerMinute: 10, PerHour: 20, Block: 5}
	admin, p := w.ledger(t, "admin", o), w.ledger(t, "p", o)
	require.Error(t, admin.SetLimits(ctx, 3, 100), "no room for a grant")
	start := w.clk.Now()
	for i := 0; i < 20; i++ {
		require.NoError(t, p.Take(ctx))
	}
	assert.True(t, w.clk.Now().After(start), "own limits: 4 grants of 5 in a minute need waiting")
	require.NoError(t, admin.SetLimits(ctx, 1000, 10000))
	start = w.clk.Now()
	for i := 0; i < 100; i++ {
		require.NoError(t, p.Take(ctx))
	}
	assert.Equal(t, start, w.clk.Now(), "the ledger's limits: no wait")
}

// ledgerNow lists the account's ledger refs and returns them with the
// message of the highest generation's commit.
func (w *world) ledgerNow(t *testing.T, ctx context.Context) (refs []string, msg string) {
	t.Helper()
	list, _, err := w.gh.Git.ListMatchingRefs(ctx, "ops", "control", &github.ReferenceListOptions{Ref: "mention-runner/pace/bot"})
	require.NoError(t, err)
	best, sha := -1, ""
	for _, r := range list {
		gen, ok := contract.PaceGen("bot", r.GetRef())
		require.True(t, ok, r.GetRef())
		refs = append(refs, r.GetRef())
		if gen > best {
			best, sha = gen, r.GetObject().GetSHA()
		}
	}
	require.NotEmpty(t, sha, "no ledger")
	c, _, err := w.gh.Git.GetCommit(ctx, "ops", "control", sha)
	require.NoError(t, err)
	return refs, c.GetMessage()
}

// takeIdle takes a slot and waits for what the grant it took left to
// finish in the background (a rotation's opening and deletions), so the
// test sees the refs as the grant leaves them.
func takeIdle(t *testing.T, ctx context.Context, l *writebudget.Ledger) {
	t.Helper()
	require.NoError(t, l.Take(ctx))
	l.Idle()
}
