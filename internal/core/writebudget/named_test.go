package writebudget_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// requests lists the simulator's requests since the last call.
func (w *world) requests() []string {
	var out []string
	for _, r := range w.sim.Requests() {
		out = append(out, r.Method+" "+r.Path)
	}
	w.sim.ResetRequests()
	return out
}

func genRef(gen int) string { return contract.PaceGenRef("bot", gen) }

// TestNamedGenerations: an account's first ledger is generation 1 (every
// first writer agrees on it); the next grant names it for the hour and
// deletes generation 1; a process holding nothing then reads the ledger
// in one request, GET commits/{ref}, instead of the listing and the commit.
func TestNamedGenerations(t *testing.T) { eachPath(t, testNamedGenerations) }

func testNamedGenerations(t *testing.T, w *world) {
	w.named = true
	ctx := ctxT(t)
	hour := contract.PaceWindowGen(w.clk.Now())

	a := w.ledger(t, "a", writebudget.Options{Block: 1, SelfCost: 2})
	takeIdle(t, ctx, a)
	refs, _ := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(1)}, refs, "a new ledger starts at generation 1")
	takeIdle(t, ctx, a)
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(hour)}, refs, "named for the hour; generation 1 deleted")
	assert.Equal(t, []int{1 + w.own(), 1 + 2*w.own() + 1}, writebudget.GrantSizes(msg), "both grants carried on; the second paid the rotation (the next generation's creation, generation 1's deletion)")
	rotations, _ := a.Rotations()
	assert.Equal(t, 1, rotations)

	w.requests()
	b := w.ledger(t, "b", writebudget.Options{Block: 1, SelfCost: 2})
	takeIdle(t, ctx, b)
	assert.Equal(t, append([]string{
		"GET /repos/ops/control/commits/refs/mention-runner/pace/bot." + fmt.Sprint(hour)},
		w.updateRequests("bot."+fmt.Sprint(hour))...), w.requests(), "the ledger read in one request")
	_, msg = w.ledgerNow(t, ctx)
	assert.Equal(t, 1, writebudget.GrantsBy(msg, b.ID()))
}

// TestNamedRetention: a closed generation is kept, not deleted, until its
// hour is two behind the clock: a process that read the state before it
// long ago cannot re-create it (the creation fails: it exists) while a
// clock could still name it, so the generation a clock names is never a
// dead re-creation. Older ones are deleted by the grant that rotates.
func TestNamedRetention(t *testing.T) { eachPath(t, testNamedRetention) }

func testNamedRetention(t *testing.T, w *world) {
	w.named = true
	ctx := ctxT(t)
	h := contract.PaceWindowGen(w.clk.Now())
	l := w.ledger(t, "a", writebudget.Options{Block: 1})
	take := func() {
		t.Helper()
		// a fresh handle each time: a new process's first grant
		takeIdle(t, ctx, w.ledger(t, "p", writebudget.Options{Block: 1}))
	}
	takeIdle(t, ctx, l)
	take()
	take() // busy: the next hour's first grant renames it (rotate.go, due)
	refs, _ := w.ledgerNow(t, ctx)
	require.Equal(t, []string{genRef(h)}, refs)

	w.clk.Advance(time.Hour)
	take()
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(h), genRef(h + 1)}, refs, "the closed generation kept")
	_, closed, _ := writebudget.LedgerState(w.commitAt(t, ctx, genRef(h)))
	assert.True(t, closed, "kept closed: a read at its name is not taken for the ledger")
	_, closedNow, _ := writebudget.LedgerState(msg)
	assert.False(t, closedNow)

	// the kept generation cannot be re-created by a late reader
	_, _, err := w.gh.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(genRef(h)),
		Object: &github.GitObject{SHA: github.String(w.shaAt(t, ctx, genRef(h+1)))}})
	require.Error(t, err)

	take()
	take() // busy
	w.clk.Advance(time.Hour)
	take() // h+2
	take()
	take()
	w.clk.Advance(time.Hour)
	take()
	refs, _ = w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(h + 1), genRef(h + 2), genRef(h + 3)}, refs, "h deleted (two hours behind), h+1 and h+2 kept")
}

// TestNamedClockSkew: which generation is the ledger never depends on a
// clock (the highest present). A process whose clock is ahead rotates a
// little early; one behind finds the generation its clock names closed,
// lists, and grants on the highest; no grant is lost.
func TestNamedClockSkew(t *testing.T) {
	w := newWorldOn(t, fakeclock.New(time.Date(2026, 3, 1, 12, 59, 50, 0, time.UTC)))
	w.named = true
	ctx := ctxT(t)
	h := contract.PaceWindowGen(w.clk.Now())
	skewed := func(holder string, d time.Duration) *writebudget.Ledger {
		l, err := writebudget.New(writebudget.Options{Client: w.gh, Repo: "ops/control", Account: "bot", Holder: holder, Block: 1,
			Now: func() time.Time { return w.clk.Now().Add(d) }, Sleep: w.clk.Sleep})
		require.NoError(t, err)
		return l
	}
	first := skewed("first", 0)
	takeIdle(t, ctx, first)
	takeIdle(t, ctx, first)
	takeIdle(t, ctx, first) // busy: renamed at the next hour
	refs, _ := w.ledgerNow(t, ctx)
	require.Equal(t, []string{genRef(h)}, refs)

	ahead := skewed("ahead", 20*time.Second)
	takeIdle(t, ctx, ahead)
	refs, _ = w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(h), genRef(h + 1)}, refs, "the clock ahead opened the next hour's generation")

	w.requests()
	behind := skewed("behind", 0)
	takeIdle(t, ctx, behind)
	reqs := w.requests()
	assert.Contains(t, reqs, "GET /repos/ops/control/commits/refs/mention-runner/pace/bot."+fmt.Sprint(h), "tried its own hour's name")
	assert.Contains(t, reqs, "GET /repos/ops/control/git/matching-refs/mention-runner/pace/bot", "found it closed: listed")
	assert.Contains(t, reqs, "PATCH /repos/ops/control/git/refs/mention-runner/pace/bot."+fmt.Sprint(h+1), "granted on the highest")
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(h), genRef(h + 1)}, refs, "no rotation back")
	for _, l := range []*writebudget.Ledger{first, ahead, behind} {
		g, _, _ := l.Stats()
		assert.Equal(t, g, writebudget.GrantsBy(msg, l.ID()), "every grant on the ledger once")
	}
}

// TestNamedReadChecksTheGeneration: a commit read at the hour's name whose
// state says it was written in another generation is not taken for the
// ledger: the listing decides.
func TestNamedReadChecksTheGeneration(t *testing.T) {
	w := newWorld(t)
	w.named = true
	ctx := ctxT(t)
	h := contract.PaceWindowGen(w.clk.Now())
	l := w.ledger(t, "a", writebudget.Options{Block: 1})
	takeIdle(t, ctx, l)
	takeIdle(t, ctx, l)
	// the hour's name pointed at a commit of generation 1's (a state
	// written as another generation)
	_, _, err := w.gh.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(genRef(1)),
		Object: &github.GitObject{SHA: github.String(w.shaAt(t, ctx, genRef(h)))}})
	require.NoError(t, err)
	c, _, err := w.gh.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String(contract.PaceMessagePrefix + `{"grants":[],"gen":1,"holder":"x"}`),
		Tree: &github.Tree{SHA: github.String("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}}, nil)
	require.NoError(t, err)
	_, _, err = w.gh.Git.UpdateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(genRef(h)), Object: &github.GitObject{SHA: c.SHA}}, true)
	require.NoError(t, err)
	w.requests()
	takeIdle(t, ctx, w.ledger(t, "b", writebudget.Options{Block: 1}))
	assert.Contains(t, w.requests(), "GET /repos/ops/control/git/matching-refs/mention-runner/pace/bot", "not taken from the named read")
}

// TestNamedRotationUnderConcurrency: four processes, clocks a few seconds
// apart, take grants across hour boundaries (and count rotations within
// an hour: RotateEvery) while GitHub enforces the account's limits: it
// refuses none of the account's writes.
func TestNamedRotationUnderConcurrency(t *testing.T) {
	eachBubblePath(t, namedRotationUnderConcurrency)
}

func namedRotationUnderConcurrency(t *testing.T, push bool) {
	w := newBubbleWorld(t, time.Date(2026, 3, 1, 12, 58, 0, 0, time.UTC))
	w.push = push
	clk := w.clk
	start := clk.Now() // 12:58 of the bubble's first day
	w.named = true
	ctx := bubbleCtx(t)
	const perMinute, perHour = 30, 60
	w.sim.SetContentLimits(perMinute, perHour)
	w.sim.AddUser("runner")
	w.sim.AddToken("runtok", "runner")
	w.sim.SetPermission("ops/control", "runner", "write")
	runner := w.client(t, "runtok")
	// as TestRotationUnderConcurrency: a dispatcher (guessing its head,
	// its ledger writes the account's) and three publish processes (the
	// workflow's token, the account's once that is refused)
	skew := []time.Duration{0, 2 * time.Second, -2 * time.Second, time.Second}
	ls := make([]*writebudget.Ledger, len(skew))
	for i, d := range skew {
		o := writebudget.Options{Client: runner, Repo: "ops/control", Account: "bot", Holder: fmt.Sprintf("p%d", i),
			PerMinute: perMinute, PerHour: perHour, Block: 3, Hold: 5 * time.Second, SelfCost: 0, Fallback: w.gh, FallbackCost: w.own(),
			RotateEvery: 6, Spare: 4 * 2, Now: func() time.Time { return clk.Now().Add(d) }, Sleep: clk.Sleep}
		if i == 0 {
			o.Client, o.SelfCost, o.Fallback, o.Guess = w.gh, w.own(), nil, true
		}
		if push {
			o.Push = w.pusher(t, o.Client)
			if o.Fallback != nil {
				o.FallbackPush = w.pusher(t, o.Fallback)
			}
		}
		l, err := writebudget.New(o)
		require.NoError(t, err)
		ls[i] = l
	}
	w.takeAll(t, ctx, ls, 20, true)

	refused, created := 0, map[string]int{}
	for _, r := range w.sim.Requests() {
		if r.Login == "ops" && r.Status == 403 && strings.Contains(string(r.RespBody), "secondary rate limit") {
			refused++
			t.Logf("refused %s %s %s at %s", r.Login, r.Method, r.Path, r.At.Format("15:04:05.000"))
		}
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/git/refs") && r.Status == 201 {
			created[string(r.ReqBody)]++
		}
		for _, up := range pushed(t, r) {
			if up.create && up.applied {
				created[up.ref]++
			}
		}
	}
	assert.Zero(t, refused, "GitHub refused none of the account's writes (the publish processes' token may be refused: they then write the ledger as the account)")
	ts := w.sim.ContentWrites()["ops"]
	assert.LessOrEqual(t, githubsim.BusiestWindow(ts, time.Minute), perMinute)
	assert.LessOrEqual(t, githubsim.BusiestWindow(ts, time.Hour), perHour)
	rotations, dead := 0, 0
	for _, l := range ls {
		r, d := l.Rotations()
		rotations, dead = rotations+r, dead+d
	}
	refs, _ := w.ledgerNow(t, ctx)
	top := 0
	for _, r := range refs {
		g, _ := contract.PaceGen("bot", r)
		top = max(top, g)
	}
	assert.Greater(t, top, contract.PaceWindowGen(start)+2, "crossed hours")
	t.Logf("%d rotations, %d dead, %d refs left, %v created, clock at %s", rotations, dead, len(refs), len(created), clk.Now().Format(time.TimeOnly))
}

// commitAt is the message of the commit ref points at.
func (w *world) commitAt(t *testing.T, ctx context.Context, ref string) string {
	t.Helper()
	c, _, err := w.gh.Git.GetCommit(ctx, "ops", "control", w.shaAt(t, ctx, ref))
	require.NoError(t, err)
	return c.GetMessage()
}

func (w *world) shaAt(t *testing.T, ctx context.Context, ref string) string {
	t.Helper()
	r, _, err := w.gh.Git.GetRef(ctx, "ops", "control", strings.TrimPrefix(ref, "refs/"))
	require.NoError(t, err)
	return r.GetObject().GetSHA()
}

// answer422 answers GET commits/{ref} with 422, as an API that resolves no
// such name would, counting them, and passes everything else on.
type answer422 struct {
	next  http.RoundTripper
	calls *atomic.Int32
}

func (a answer422) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/commits/refs/") {
		a.calls.Add(1)
		return &http.Response{StatusCode: http.StatusUnprocessableEntity, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"message":"No commit found for SHA"}`)), Request: r}, nil
	}
	return a.next.RoundTrip(r)
}

// TestNamedReadOffWhereItAlwaysMisses: where GET commits/{ref} never finds
// the ledger that is there, a handle stops trying after two such misses
// in a row (says so through Warn) and reads the listing only, as before
// named generations: at most four requests lost (each miss also reads the
// hour before's name beside the listing), and no grant.
func TestNamedReadOffWhereItAlwaysMisses(t *testing.T) {
	w := newWorld(t)
	w.named = true
	ctx := ctxT(t)
	seed := w.ledger(t, "seed", writebudget.Options{Block: 1})
	takeIdle(t, ctx, seed)
	takeIdle(t, ctx, seed) // the ledger at the hour's name
	hc := *w.gh.Client()
	var calls atomic.Int32
	hc.Transport = answer422{next: hc.Transport, calls: &calls}
	blind := github.NewClient(&hc)
	blind.BaseURL = w.gh.BaseURL
	var warned []error
	l := w.ledger(t, "a", writebudget.Options{Block: 1, Client: blind, Warn: func(err error) { warned = append(warned, err) }})
	reads := func() int { return int(calls.Swap(0)) }
	for i, want := range []int{2, 2, 0, 0} {
		takeIdle(t, ctx, l)
		assert.Equal(t, want, reads(), "grant %d", i)
	}
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0].Error(), "reading it from the listing")
	grants, _, _ := l.Stats()
	_, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, grants, writebudget.GrantsBy(msg, l.ID()), "every grant on the ledger")
}

// TestNamedRotationByAGuessingHandle: a running dispatcher alone (Guess:
// it commits on its own head unread) rotates every hour without listing
// for its grants; its rotations list the generations once to delete the
// ones two hours behind, so they do not pile up.
func TestNamedRotationByAGuessingHandle(t *testing.T) {
	eachPath(t, testNamedRotationByAGuessingHandle)
}

func testNamedRotationByAGuessingHandle(t *testing.T, w *world) {
	w.named = true
	ctx := ctxT(t)
	h := contract.PaceWindowGen(w.clk.Now())
	l := w.ledger(t, "d", writebudget.Options{Block: 1, SelfCost: 2, Guess: true})
	for hour := 0; hour < 6; hour++ {
		for range 3 {
			takeIdle(t, ctx, l)
		}
		w.clk.Advance(time.Hour)
	}
	takeIdle(t, ctx, l)
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(h + 4), genRef(h + 5), genRef(h + 6)}, refs, "kept two hours, the older deleted")
	assert.Positive(t, l.Guesses(), "its grants were committed unread")
	grants, lost, _ := l.Stats()
	assert.Zero(t, lost)
	assert.Equal(t, 4, writebudget.GrantsBy(msg, l.ID()), "the last hour's grants on the ledger, carried across the rotation")
	assert.Greater(t, grants, 6)
}

// TestNamedFirstGrantOfTheHour: the first grant of an hour finds no
// generation at the hour's name; it lists the generations beside a read
// of the hour before's name (the ledger: one round trip, not the listing
// and then the commit), closes that generation with its grant, and is
// held before the next generation is opened: a write waiting for it goes
// while the opening (held back here) is still under way.
func TestNamedFirstGrantOfTheHour(t *testing.T) { eachPath(t, testNamedFirstGrantOfTheHour) }

func testNamedFirstGrantOfTheHour(t *testing.T, w *world) {
	w.named = true
	ctx := ctxT(t)
	seed := w.ledger(t, "seed", writebudget.Options{Block: 1, SelfCost: 2})
	takeIdle(t, ctx, seed)
	takeIdle(t, ctx, seed) // the ledger at the hour's name
	takeIdle(t, ctx, seed) // busy: the next hour's first grant renames it
	before := contract.PaceWindowGen(w.clk.Now())
	w.clk.Advance(time.Hour)
	hour := before + 1

	release := make(chan struct{})
	o := writebudget.Options{Block: 1, SelfCost: 2}
	o.Client = hookedOn(w.gh, http.MethodPost, func() { <-release }) // the next generation's creation
	l := w.ledger(t, "fresh", o)
	w.requests()
	assert.True(t, takeSoon(t, ctx, l, 20*time.Second), "the grant is held while the next generation is still being opened")
	close(release)
	l.Idle()
	got := w.requests()
	want := append(w.updateRequests("bot."+fmt.Sprint(before)), w.createRequests()...)
	want = append(want, "GET /repos/ops/control/git/matching-refs/mention-runner/pace/bot")
	require.Len(t, got, 3+len(want))
	assert.Equal(t, "GET /repos/ops/control/commits/refs/mention-runner/pace/bot."+fmt.Sprint(hour), got[0], "the hour's name: not there yet")
	assert.ElementsMatch(t, []string{
		"GET /repos/ops/control/commits/refs/mention-runner/pace/bot." + fmt.Sprint(before),
		"GET /repos/ops/control/git/matching-refs/mention-runner/pace/bot",
	}, got[1:3], "the listing beside the hour before's read")
	assert.Equal(t, want, got[3:], "the grant closes the hour before's generation; then the next one is opened (root, ref) and checked")
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(before), genRef(hour)}, refs, "the closed generation kept (retention)")
	assert.Equal(t, 1, writebudget.GrantsBy(msg, l.ID()), "the grant carried on")

	// the next process of the hour reads it in one request
	next := w.ledger(t, "next", writebudget.Options{Block: 1, SelfCost: 2})
	w.requests()
	takeIdle(t, ctx, next)
	assert.Equal(t, "GET /repos/ops/control/commits/refs/mention-runner/pace/bot."+fmt.Sprint(hour), w.requests()[0])
}

// TestNamedQuietAccount: an account that took fewer than three grants in
// an hour and the one before keeps its generation under its older name:
// a fresh process's grant two hours later reads it from the listing (the
// hour's name and the hour before's miss) and commits on it, paying no
// rotation.
func TestNamedQuietAccount(t *testing.T) { eachPath(t, testNamedQuietAccount) }

func testNamedQuietAccount(t *testing.T, w *world) {
	w.named = true
	ctx := ctxT(t)
	seed := w.ledger(t, "seed", writebudget.Options{Block: 1, SelfCost: 2})
	takeIdle(t, ctx, seed)
	takeIdle(t, ctx, seed) // the ledger at the hour's name, 2 grants
	h := contract.PaceWindowGen(w.clk.Now())
	w.clk.Advance(2 * time.Hour)
	sha := w.shaAt(t, ctx, genRef(h))
	l := w.ledger(t, "fresh", writebudget.Options{Block: 1, SelfCost: 2})
	w.requests()
	takeIdle(t, ctx, l)
	got := w.requests()
	want := append([]string{"GET /repos/ops/control/git/commits/" + sha}, w.updateRequests("bot."+fmt.Sprint(h))...)
	require.Len(t, got, 3+len(want))
	assert.Equal(t, "GET /repos/ops/control/commits/refs/mention-runner/pace/bot."+fmt.Sprint(h+2), got[0])
	assert.ElementsMatch(t, []string{
		"GET /repos/ops/control/commits/refs/mention-runner/pace/bot." + fmt.Sprint(h+1),
		"GET /repos/ops/control/git/matching-refs/mention-runner/pace/bot",
	}, got[1:3])
	assert.Equal(t, want, got[3:], "granted on the quiet generation: no rotation")
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{genRef(h)}, refs)
	assert.Equal(t, 1, writebudget.GrantsBy(msg, l.ID()))
	rotations, _ := l.Rotations()
	assert.Zero(t, rotations)
}
