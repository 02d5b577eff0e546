package writebudget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// TestRotationUnderConcurrency: processes granting at once across many
// rotations (a generation every 4 commits), as the account's writers do:
// one (the dispatcher) writes the ledger as the account, the others
// (publish jobs) with another token. No grant is lost (the last
// generation lists every grant taken), the account's limits hold for
// every write it made (the processes' and the ledger's own, rotations
// included: GitHub refuses none), each generation is opened exactly once,
// the generations left behind are deleted and the live chain stays short.
func TestRotationUnderConcurrency(t *testing.T) { eachBubblePath(t, rotationUnderConcurrency) }

func rotationUnderConcurrency(t *testing.T, push bool) {
	w := newBubbleWorld(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	w.push = push
	ctx := bubbleCtx(t)
	const perMinute, perHour, every = 30, 500, 4
	w.sim.SetContentLimits(perMinute, perHour)
	w.sim.AddUser("runner")
	w.sim.AddToken("runtok", "runner")
	w.sim.SetPermission("ops/control", "runner", "write")
	runner := w.client(t, "runtok")
	// the publish processes' own token runs out in the first minute (the
	// limits are every account's): then they too write the ledger as the
	// account, so all four may lose a swap at once. Spare: 8 writes no
	// ledger records yet, four lost REST updates at once, or (pushed, one
	// write a loss) the dispatcher's pushes lost in a row while the three
	// others win one round each
	o := writebudget.Options{PerMinute: perMinute, PerHour: perHour, Block: 3, Hold: 5 * time.Second, RotateEvery: every, Spare: 4 * 2}
	ls := make([]*writebudget.Ledger, 4)
	for i := range ls {
		o.Client, o.SelfCost, o.Fallback, o.FallbackCost = runner, 0, w.gh, 2
		o.Guess = i == 0
		if i == 0 {
			// the dispatcher: guesses the head (optimistic.go), and loses
			o.Client, o.SelfCost, o.Fallback = w.gh, 2, nil
		}
		ls[i] = w.ledger(t, fmt.Sprintf("p%d", i), o)
	}
	w.takeAll(t, ctx, ls, 16, true)

	grants, rotations, dead := 0, 0, 0
	for _, l := range ls {
		g, _, _ := l.Stats()
		grants += g
		r, d := l.Rotations()
		rotations, dead = rotations+r, dead+d
	}
	refs, msg := w.ledgerNow(t, ctx)
	// no grant lost, none recorded twice: each handle's, one by one
	assert.Len(t, writebudget.GrantSizes(msg), grants, "every grant taken is in the ledger")
	for i, l := range ls {
		g, _, _ := l.Stats()
		assert.Equal(t, g, writebudget.GrantsBy(msg, l.ID()), "p%d's grants in the ledger, each once", i)
	}
	require.Len(t, refs, 1, "the generations left behind are deleted")
	gen, _ := contract.PaceGen("bot", refs[0])
	assert.GreaterOrEqual(t, gen, 5, "rotated again and again")
	assert.Positive(t, rotations)

	// each generation opened once; a process that read one closed long
	// ago may re-create it after it was rotated past and deleted: a dead
	// ref below the ledger. Counted from GitHub's log, not by the handles:
	// a handle counts one dead only when its grant there was lost and
	// taken again; a closer's re-creation whose grant another process
	// carried on counts nothing (TestCloserReCreatesACarriedGeneration).
	type creation struct {
		gen            int
		arrived, ended int64
	}
	opened := map[string][]creation{}
	refused := 0
	for _, r := range w.sim.Requests() {
		if r.Login == "ops" && r.Status == http.StatusForbidden && strings.Contains(string(r.RespBody), "secondary rate limit") {
			refused++
			t.Logf("refused %s %s %s at %s", r.Login, r.Method, r.Path, r.At.Format("15:04:05.000"))
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git/refs") && r.Status == http.StatusCreated {
			var body struct{ Ref string }
			require.NoError(t, json.Unmarshal(r.ReqBody, &body))
			g, ok := contract.PaceGen("bot", body.Ref)
			require.True(t, ok, body.Ref)
			opened[body.Ref] = append(opened[body.Ref], creation{g, r.Arrived, r.Ended})
		}
		for _, up := range pushed(t, r) {
			if g, ok := contract.PaceGen("bot", up.ref); ok && up.create && up.applied {
				opened[up.ref] = append(opened[up.ref], creation{g, r.Arrived, r.Ended})
			}
		}
	}
	// A generation is deleted only once a higher one exists, so the
	// ledger itself is never the one re-created: each re-creation was
	// applied after some higher generation's creation was. The log's
	// order is arrival, not application (a request can wait in the
	// server while later ones are applied), so that is checked by the
	// log's order of arrivals and ends: the higher creation arrived
	// before the re-creation was answered. Which of a ref's creations was
	// the first is not known either: all but one of them must pass.
	recreated := 0
	for ref, cs := range opened {
		recreated += len(cs) - 1
		below := 0
		for _, c := range cs {
			for _, o := range opened {
				if slices.ContainsFunc(o, func(h creation) bool { return h.gen > c.gen && h.arrived < c.ended }) {
					below++
					break
				}
			}
		}
		assert.GreaterOrEqual(t, below, len(cs)-1, "%s re-created only below a higher generation", ref)
	}
	assert.Zero(t, refused, "GitHub refused none of the account's writes (the publish processes' token may be refused: they then write the ledger as the account)")
	ts := w.sim.ContentWrites()["ops"]
	assert.LessOrEqual(t, githubsim.BusiestWindow(ts, time.Minute), perMinute)
	require.Len(t, opened, gen, "generations 1…%d", gen)
	for g := 1; g <= gen; g++ {
		assert.NotEmpty(t, opened[contract.PaceGenRef("bot", g)], "generation %d opened", g)
	}
	assert.LessOrEqual(t, dead, recreated, "every generation a handle counts dead was re-created")
	t.Logf("%d generations, %d re-created below the ledger, %d of them with the grant taken again", gen, recreated, dead)

	// the live chain: at most RotateEvery commits back to its root
	ref, _, err := w.gh.Git.GetRef(ctx, "ops", "control", strings.TrimPrefix(refs[0], "refs/"))
	require.NoError(t, err)
	sha, length := ref.GetObject().GetSHA(), 0
	for sha != "" {
		c, _, err := w.gh.Git.GetCommit(ctx, "ops", "control", sha)
		require.NoError(t, err)
		length++
		sha = ""
		if len(c.Parents) > 0 {
			sha = c.Parents[0].GetSHA()
		}
	}
	assert.LessOrEqual(t, length, every)
	seq, closed, dated := writebudget.LedgerState(msg)
	assert.Equal(t, length-1, seq)
	assert.False(t, closed)
	assert.True(t, dated)
}

// TestFirstGenerationIsCarriedOn: a ledger written before rotation (the
// first generation, contract.PaceRef, no start date) is read, closed by
// the next grant and carried into generation 1 with its grants and pause;
// its ref is deleted.
func TestFirstGenerationIsCarriedOn(t *testing.T) { eachPath(t, testFirstGenerationIsCarriedOn) }

func testFirstGenerationIsCarriedOn(t *testing.T, w *world) {
	ctx := ctxT(t)
	at := w.clk.Now().Add(-10 * time.Second).UnixMilli()
	old := fmt.Sprintf("mention-runner write budget\n\n{\"grants\":[{\"at_ms\":%d,\"n\":7}],\"pause_until_ms\":%d,\"holder\":\"old\"}", at, w.clk.Now().Add(30*time.Second).UnixMilli())
	c, _, err := w.gh.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String(old),
		Tree: &github.Tree{SHA: github.String("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}}, nil)
	require.NoError(t, err)
	_, _, err = w.gh.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(contract.PaceRef("bot")), Object: &github.GitObject{SHA: c.SHA}})
	require.NoError(t, err)

	start := w.clk.Now()
	l := w.ledger(t, "new", writebudget.Options{Block: 2})
	takeIdle(t, ctx, l)
	assert.Equal(t, start.Add(30*time.Second), w.clk.Now(), "the old generation's pause holds")
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{contract.PaceGenRef("bot", 1)}, refs)
	assert.Equal(t, []int{7, 2 + 0}, writebudget.GrantSizes(msg), "the old grant carried on, the new one added")
	seq, closed, dated := writebudget.LedgerState(msg)
	assert.Zero(t, seq)
	assert.False(t, closed)
	assert.True(t, dated)
	r, dead := l.Rotations()
	assert.Equal(t, 1, r)
	assert.Zero(t, dead)
}

// TestRotationAfterADay: a generation older than RotateAfter is closed by
// the next grant however few commits it has.
func TestRotationAfterADay(t *testing.T) { eachPath(t, testRotationAfterADay) }

func testRotationAfterADay(t *testing.T, w *world) {
	ctx := ctxT(t)
	l := w.ledger(t, "a", writebudget.Options{Block: 1})
	takeIdle(t, ctx, l)
	takeIdle(t, ctx, l)
	refs, _ := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{contract.PaceGenRef("bot", 1)}, refs)
	w.clk.Advance(writebudget.DefaultRotateAfter)
	takeIdle(t, ctx, l)
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{contract.PaceGenRef("bot", 2)}, refs)
	assert.Equal(t, []int{1}, writebudget.GrantSizes(msg), "the day-old grants are pruned, the new one carried")
}

// TestFallbackWritesTheLedger: when the ledger's own client is refused (its
// account's limits used up, as a workflow token shared by every assemble
// job can be), the ledger is written with the fallback at its cost
// instead of the process pacing itself alone.
func TestFallbackWritesTheLedger(t *testing.T) { eachPath(t, testFallbackWritesTheLedger) }

func testFallbackWritesTheLedger(t *testing.T, w *world) {
	ctx := ctxT(t)
	w.sim.AddUser("bot")
	w.sim.AddToken("bottok", "bot")
	w.sim.SetPermission("ops/control", "bot", "write")
	botClient := w.client(t, "bottok")
	w.sim.SetContentLimits(1000, 12)
	// ops (the primary) has writes left this hour for one ledger update
	// and a part of the next (REST: 3; pushed: 1)
	for i := 0; i < 12-(2*w.own()-1); i++ {
		_, _, err := w.gh.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String("work"),
			Tree: &github.Tree{SHA: github.String("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}}, nil)
		require.NoError(t, err)
	}
	var warned []string
	o := writebudget.Options{Block: 2, Fallback: botClient, FallbackCost: 2, Warn: func(err error) { warned = append(warned, err.Error()) }}
	l := w.ledger(t, "pub", o)
	for i := 0; i < 6; i++ {
		takeIdle(t, ctx, l)
	}
	g, _, _ := l.Stats()
	assert.Equal(t, 3, g, "three grants of 2, all in the ledger")
	_, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []int{2, 2 + w.own(), 2 + w.own()}, writebudget.GrantSizes(msg), "the first written by ops (free), then by the bot (its update's cost each)")
	require.NotEmpty(t, warned)
	assert.Contains(t, warned[0], "fallback")
	for _, s := range warned {
		assert.NotContains(t, s, "alone")
	}
}

// TestRotationUnderLostAnswers: ledger writes that GitHub stores but whose
// answer is lost (502, reset) while processes grant and rotate at once:
// every grant a process holds is in the ledger (a lost answer may record
// one twice, never none). A generation's creation is sent once and
// checked: repeated blindly after a lost answer it re-created a generation
// already rotated past and deleted, at the same commit, and a process
// still holding that commit committed a grant onto it that nobody reads
// (1 run in ~300 under -race).
func TestRotationUnderLostAnswers(t *testing.T) { eachBubblePath(t, rotationUnderLostAnswers) }

func rotationUnderLostAnswers(t *testing.T, push bool) {
	w := newBubbleWorld(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	w.push = push
	clk := w.clk
	ctx := bubbleCtx(t)
	// each fault fails one request at most twice: its fifth attempt (the
	// client's MaxRetries) gets through. Drawn afresh for every attempt,
	// all five would fail now and then (about once in 900 runs): the
	// ledger is then unusable and the process paces itself alone (Warn),
	// as meant, but not what this test is about.
	for _, k := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset} {
		w.sim.AddFault(githubsim.Fault{Path: "/repos/ops/control/git/*", Kind: k, Rate: 0.08, AfterApply: true, WritesOnly: true, PerRequest: 2})
		// a push is sent once: its lost answer is read back, not retried
		w.sim.AddFault(githubsim.Fault{Path: "/ops/control.git/git-receive-pack", Kind: k, Rate: 0.08, AfterApply: true})
	}
	o := writebudget.Options{Block: 1, RotateEvery: 3}
	ls := make([]*writebudget.Ledger, 3)
	var warnMu sync.Mutex
	warned := make([][]string, len(ls))
	for i := range ls {
		o.Guess = i == 0 // one commits on the head it wrote last, unread
		o.Warn = func(err error) {
			warnMu.Lock()
			defer warnMu.Unlock()
			warned[i] = append(warned[i], fmt.Sprintf("%s %v", clk.Now().Format("15:04:05.000"), err))
		}
		ls[i] = w.ledger(t, fmt.Sprintf("p%d", i), o)
	}
	w.takeAll(t, ctx, ls, 12, false)
	refs, msg := w.ledgerNow(t, ctx)
	for i, l := range ls {
		g, _, _ := l.Stats()
		assert.Equal(t, 12, g, "p%d warned: %q", i, warned[i])
		assert.GreaterOrEqual(t, writebudget.GrantsBy(msg, l.ID()), g, "every grant %s holds is in the ledger (%d of them guessed)", l.ID(), l.Guesses())
	}
	gen := -1
	for _, r := range refs {
		g, _ := contract.PaceGen("bot", r)
		gen = max(gen, g)
	}
	assert.GreaterOrEqual(t, gen, 4, "rotated again and again")
	lostAnswers := 0
	for _, r := range w.sim.Requests() {
		if r.AppliedStatus != 0 {
			lostAnswers++
		}
	}
	assert.Positive(t, lostAnswers, "writes were stored with their answers lost")
}

// TestCloserReCreatesACarriedGeneration: the process that closed a
// generation creates the next one (rotate.go, open), but another process
// read the closed state first, opened that generation with its own grant,
// filled, closed and rotated past it and deleted it before the closer's
// creation arrives, which then succeeds: a dead re-creation below the
// ledger. The closer's grant was in the closed state and is carried on
// into the ledger by the other process, so nothing is lost and nothing
// taken twice: the closer does not take it again, and does not count the
// ref dead (Rotations), and the next grant deletes it. This is why
// TestRotationUnderConcurrency cannot count re-creations by the handles'
// dead ones (it did, and failed ~1 run in 600).
func TestCloserReCreatesACarriedGeneration(t *testing.T) {
	eachPath(t, testCloserReCreatesACarriedGeneration)
}

func testCloserReCreatesACarriedGeneration(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{Block: 1, RotateEvery: 2}
	b := w.ledger(t, "b", o)
	// b's first grant creates generation 1; a's are updates of it until
	// the one that closes it: a's first creation is the next generation
	takeIdle(t, ctx, b)
	o.Client = hookedOn(w.gh, http.MethodPost, func() {
		// before a's creation of generation 2: b opens it (reading 1
		// closed), fills it, closes it, opens 3 and deletes 1 and 2
		for k := 0; k < 3; k++ {
			takeIdle(t, ctx, b)
		}
		refs, _ := w.ledgerNow(t, ctx)
		require.Equal(t, []string{contract.PaceGenRef("bot", 3)}, refs, "b rotated past generation 2 and deleted it")
	})
	a := w.ledger(t, "a", o)
	takeIdle(t, ctx, a)
	refs, msg := w.ledgerNow(t, ctx)
	require.Equal(t, []string{contract.PaceGenRef("bot", 1)}, refs)
	seq, closed, _ := writebudget.LedgerState(msg)
	require.Equal(t, 1, seq)
	require.False(t, closed)
	// a's second grant is due: it closes generation 1 and creates 2, after b
	takeIdle(t, ctx, a)

	assert.Equal(t, map[string]int{contract.PaceGenRef("bot", 1): 1, contract.PaceGenRef("bot", 2): 2, contract.PaceGenRef("bot", 3): 1},
		createdRefs(t, w), "generation 2 created twice, the second time below 3")
	refs, msg = w.ledgerNow(t, ctx)
	assert.ElementsMatch(t, []string{contract.PaceGenRef("bot", 2), contract.PaceGenRef("bot", 3)}, refs, "the dead re-creation is left below the ledger")
	for l, n := range map[*writebudget.Ledger]int{a: 2, b: 4} {
		assert.Equal(t, n, writebudget.GrantsBy(msg, l.ID()), "every grant in the ledger once: a's closing one carried on by b, not taken again")
		g, _, _ := l.Stats()
		assert.Equal(t, n, g)
		_, dead := l.Rotations()
		assert.Zero(t, dead, "no grant taken again: not counted dead")
	}

	takeIdle(t, ctx, a)
	refs, msg = w.ledgerNow(t, ctx)
	assert.Equal(t, []string{contract.PaceGenRef("bot", 3)}, refs, "the next grant deletes the dead generation")
	assert.Equal(t, 3, writebudget.GrantsBy(msg, a.ID()))
}

// TestLateReaderReCreatesADeadGeneration: a process reads a generation
// closed (before its closer opened the next) and creates the next one
// with its grant only after that one was opened, rotated past and
// deleted: the creation succeeds below the ledger, where nobody reads the
// grant. The process sees a higher generation without its grant, counts
// the ref dead and takes the grant again on the ledger: in it once. Also
// when it cannot read the ledger to check whether its grant was carried
// on: unsure counts as not carried (used as written, the grant would be
// held only by the dead generation: the account's writes under it
// counted nowhere).
func TestLateReaderReCreatesADeadGeneration(t *testing.T) {
	for _, tc := range []struct {
		name           string
		checkReadFails bool
	}{
		{"reads the ledger", false},
		{"cannot read the ledger", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachPath(t, func(t *testing.T, w *world) {
				ctx := ctxT(t)
				o := writebudget.Options{Block: 1, RotateEvery: 2}
				takeIdle(t, ctx, w.ledger(t, "c", o)) // generation 1
				atCreate, goOn, aDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
				oa := o
				hc := hookedOn(w.gh, http.MethodPost, func() {
					close(atCreate)
					<-goOn
				}).Client()
				fail := &failFirstCommitRead{next: hc.Transport}
				hc.Transport = fail
				oa.Client = github.NewClient(hc)
				oa.Client.BaseURL = w.gh.BaseURL
				tokens.Store(oa.Client, "tok")
				a := w.ledger(t, "a", oa)
				ob := o
				ob.Client = hookedOn(w.gh, http.MethodPost, func() {
					// b closed generation 1 and is about to open 2: a reads 1
					// closed and stops before creating 2 itself
					go func() { aDone <- a.Take(ctx) }()
					<-atCreate
				})
				b := w.ledger(t, "b", ob)
				takeIdle(t, ctx, b) // generation 1's second commit
				takeIdle(t, ctx, b) // closes 1, opens 2 (a waits)
				takeIdle(t, ctx, b) // 2's second commit
				takeIdle(t, ctx, b) // closes 2, opens 3, deletes 1 and 2
				refs, _ := w.ledgerNow(t, ctx)
				require.Equal(t, []string{contract.PaceGenRef("bot", 3)}, refs)
				fail.armed.Store(tc.checkReadFails) // a's check of generation 3
				close(goOn)
				require.NoError(t, <-aDone)
				a.Idle()
				assert.False(t, fail.armed.Load(), "a's check read the ledger (and failed)")

				assert.Equal(t, 2, createdRefs(t, w)[contract.PaceGenRef("bot", 2)], "a re-created generation 2 below 3")
				_, dead := a.Rotations()
				assert.Equal(t, 1, dead)
				refs, msg := w.ledgerNow(t, ctx)
				assert.Contains(t, refs, contract.PaceGenRef("bot", 3))
				g, _, _ := a.Stats()
				assert.Equal(t, 1, g)
				assert.Equal(t, 1, writebudget.GrantsBy(msg, a.ID()), "a's grant taken again on the ledger, once")
				assert.Equal(t, 4, writebudget.GrantsBy(msg, b.ID()))
			})
		})
	}
}

// TestUnsentCreationKeepsTheClosedGeneration: the closer's creation of
// the next generation fails unsent (no answer, nothing stored). The
// closed generation is the ledger still, with every grant: it is not
// deleted (that would leave no ledger: every grant of the hour
// forgotten), and the next grant opens the next generation carrying them on.
func TestUnsentCreationKeepsTheClosedGeneration(t *testing.T) {
	eachPath(t, testUnsentCreationKeepsTheClosedGeneration)
}

func testUnsentCreationKeepsTheClosedGeneration(t *testing.T, w *world) {
	ctx := ctxT(t)
	o := writebudget.Options{Block: 1, RotateEvery: 2}
	c := w.ledger(t, "c", o)
	takeIdle(t, ctx, c) // generation 1
	oa := o
	oa.Client = unsent(w.gh, http.MethodPost)
	a := w.ledger(t, "a", oa)
	takeIdle(t, ctx, a) // 1's second commit
	takeIdle(t, ctx, a) // closes 1; creating 2 fails unsent
	refs, _ := w.ledgerNow(t, ctx)
	require.Equal(t, []string{contract.PaceGenRef("bot", 1)}, refs, "the closed generation is the ledger still")

	b := w.ledger(t, "b", o)
	takeIdle(t, ctx, b)
	refs, msg := w.ledgerNow(t, ctx)
	assert.Equal(t, []string{contract.PaceGenRef("bot", 2)}, refs, "the next grant opened generation 2 and deleted 1")
	for l, n := range map[*writebudget.Ledger]int{a: 2, b: 1, c: 1} {
		assert.Equal(t, n, writebudget.GrantsBy(msg, l.ID()), "every grant carried on, once")
	}
}

// eachBubblePath runs f in a testing/synctest bubble once per path
// (push says which).
func eachBubblePath(t *testing.T, f func(t *testing.T, push bool)) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { f(t, p.push) }) })
	}
}

// createdRefs counts the ledger ref creations GitHub accepted, by ref.
func createdRefs(t *testing.T, w *world) map[string]int {
	t.Helper()
	created := map[string]int{}
	for _, r := range w.sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git/refs") && r.Status == http.StatusCreated {
			var body struct{ Ref string }
			require.NoError(t, json.Unmarshal(r.ReqBody, &body))
			created[body.Ref]++
		}
		for _, up := range pushed(t, r) {
			if up.create && up.applied {
				created[up.ref]++
			}
		}
	}
	return created
}

// pushedUpdate is one ref update of a push in the simulator's log.
type pushedUpdate struct {
	ref             string
	create, applied bool
}

// pushed lists the ref updates of r when it is a push, and whether the
// server applied each (its answer's report; none when that was lost).
func pushed(t *testing.T, r githubsim.LoggedRequest) []pushedUpdate {
	t.Helper()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.Path, "/git-receive-pack") {
		return nil
	}
	ok := map[string]bool{}
	for _, l := range pktLines(r.RespBody) {
		if ref, found := strings.CutPrefix(l, "ok "); found {
			ok[ref] = true
		}
	}
	var out []pushedUpdate
	for _, l := range pktLines(r.ReqBody) {
		fields := strings.Fields(strings.SplitN(l, "\x00", 2)[0])
		require.Len(t, fields, 3, "a push command: old new ref")
		out = append(out, pushedUpdate{ref: fields[2], create: fields[0] == strings.Repeat("0", 40), applied: ok[fields[2]] && r.Status == http.StatusOK})
	}
	return out
}

// pktLines splits b's pkt-lines up to the first flush.
func pktLines(b []byte) []string {
	var out []string
	for len(b) >= 4 {
		var n int
		if _, err := fmt.Sscanf(string(b[:4]), "%04x", &n); err != nil || n == 0 || n < 4 || n > len(b) {
			break
		}
		out = append(out, strings.TrimSuffix(string(b[4:n]), "\n"))
		b = b[n:]
	}
	return out
}

// failFirstCommitRead fails the first read of a commit gh sends once
// armed, as a connection reset does.
type failFirstCommitRead struct {
	next  http.RoundTripper
	armed atomic.Bool
}

func (f *failFirstCommitRead) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/git/commits/") && f.armed.CompareAndSwap(true, false) {
		return nil, errors.New("read: connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

// takeAll runs the ledgers at once (in a bubble: newBubbleWorld), each
// taking n grants; with write, each grant is followed by the write its
// slot was for: a commit in the control repository, as the account.
func (w *world) takeAll(t *testing.T, ctx context.Context, ls []*writebudget.Ledger, n int, write bool) {
	t.Helper()
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Go(func() {
			for k := 0; k < n; k++ {
				if !assert.NoError(t, l.Take(ctx)) {
					return
				}
				if write {
					_, _, err := w.gh.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String("work"),
						Tree: &github.Tree{SHA: github.String("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}}, nil)
					assert.NoError(t, err)
				}
			}
			l.Idle()
		})
	}
	wg.Wait()
}
