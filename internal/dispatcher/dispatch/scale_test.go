package dispatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

func truncationOf(t *testing.T, m map[string]json.RawMessage) threadctx.Truncation {
	var tr threadctx.Truncation
	require.NoError(t, json.Unmarshal(m["truncation"], &tr))
	return tr
}

func TestLongThreadTruncatedWithinBudget(t *testing.T) {
	e := newEnv(t)
	e.sim.SetRequestLogLimit(0)
	n := e.issue("a long thread")
	// 600 comments of ≈ 1.2 kB: ≈ 1.4× the budget (so some must go) over
	// 6 pages of the listing; more comments only cost the simulator time.
	const comments = 600
	filler := strings.Repeat("words and more words ", 60)
	for i := 0; i < comments; i++ {
		e.comment(n, "bob", fmt.Sprintf("comment %d %s", i, filler))
	}
	c := e.comment(n, "alice", "@mrbot summarise")
	e.comment(n, "bob", "posted after the trigger")
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.Greater(t, dec.Dispatches, 1, "sharded")
	m := e.contexts()[dec.JobID]
	assert.LessOrEqual(t, len(e.rawContexts()[dec.JobID]), threadctx.DefaultMaxBytes)
	tr := truncationOf(t, m)
	assert.Equal(t, comments+2, tr.CommentsTotal)
	assert.NotEmpty(t, tr.DroppedIDs, "over the budget")
	assert.Len(t, tr.AfterTriggerIDs, 1)
	assert.Equal(t, tr.CommentsTotal-1-len(tr.DroppedIDs), tr.CommentsKept)
	var kept []struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
	}
	require.NoError(t, json.Unmarshal(m["comments"], &kept))
	assert.Equal(t, c.GetID(), kept[len(kept)-1].ID, "the trigger is kept, last")
	assert.Contains(t, kept[0].Body, "comment 0 ", "the oldest is kept")
	assert.Contains(t, kept[len(kept)-2].Body, fmt.Sprintf("comment %d ", comments-1), "the newest are kept")
}

// A pull request's diff is not in the dispatched context (the runner's
// fetch job reads it at the recorded head: prdiff): a 5 MB diff neither
// costs the dispatcher a read nor turns the dispatch into shards.
func TestHugeDiffStaysOutOfTheDispatch(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		fmt.Fprintf(&b, "diff --git a/f%d b/f%d\n+%s\n", i, i, strings.Repeat("x", 200))
	}
	pr := e.pr("@mrbot review the big one", b.String())
	e.sim.ResetRequests()
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("pull_request", pr, 0))
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.Equal(t, 1, dec.Dispatches)
	for _, d := range e.sim.Dispatches(control) {
		assert.Equal(t, contract.EventAgentSmall, d.EventType)
	}
	m := e.contexts()[dec.JobID]
	assert.NotContains(t, m, contract.KeyDiff)
	assert.Contains(t, m, contract.KeyPullRequest, "the head sha the runner reads the diff at")
	for _, r := range e.sim.Requests() {
		assert.False(t, strings.HasPrefix(string(r.RespBody), "diff --git"), "no diff read: %s %s", r.Method, r.Path)
	}
}

// costLatency is added to every request while TestRequestCost measures,
// so requests made together overlap and dependent ones do not (on the
// synctest bubble's clock: it costs no wall time).
const costLatency = 250 * time.Millisecond

// measureCost handles trig with d and returns every request it made
// (dispatches included) and their sequential round trips.
func (e *env) measureCost(d *Dispatcher, trig *Trigger) ([]string, int) {
	e.t.Helper()
	e.sim.ResetRequests()
	dec, err := d.Handle(e.ctx(), trig)
	require.NoError(e.t, err)
	require.Equal(e.t, Dispatch, dec.Decision, dec.Reason)
	reqs := e.sim.Requests()
	var lines []string
	for _, r := range reqs {
		lines = append(lines, r.Method+" "+r.Path)
	}
	return lines, githubsim.RoundTrips(reqs)
}

// TestRequestCost pins what one mention costs in API requests, everything
// counted (reads, claim and its mark, dispatch, reaction, rate state, the
// account's write ledger), and in sequential round trips, with
// the dispatcher wired as cmd/dispatcher wires it (wiredDispatcher). A
// running dispatcher (serve) has the opt-out list, rate state, each
// repository's labels and claim commits cached and writes the rate state once per CacheTTL, not per
// mention; it takes its next ledger grant beside a mention's reads while
// it still holds slots, so back-to-back mentions wait for no grant. A
// fresh one (event mode, FlushEach) reads and writes everything, and its
// first write waits for its first grant.
func TestRequestCost(t *testing.T) {
	if testing.Short() {
		t.Skip("request counts at an added latency: make test and make bench run them")
	}
	// In a synctest bubble with the simulator in memory, the added latency
	// passes on the bubble's clock: requests made together start at the
	// same instant however loaded the machine is (on a socket and the wall
	// clock, a starved goroutine's request could start after its sibling's
	// answer and count as a round trip more).
	synctest.Test(t, testRequestCost)
}

func testRequestCost(t *testing.T) {
	e := newEnvInMemory(t)
	clk := fakeclock.New(time.Now())
	e.ledgerAtWindow(clk)
	d := e.wiredDispatcher(clk)
	warm := e.issue("warm")
	c := e.comment(warm, "alice", "@mrbot warm up the caches")
	// The latency is on for the warm-up too: its first grant is sized by
	// Handle's Ready even when its first write's Take starts the grant
	// (the size is asked after the ledger's read).
	e.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: costLatency})
	_, err := d.Handle(e.ctx(), e.trigger("issue_comment", warm, c.GetID()))
	require.NoError(t, err)
	require.NoError(t, d.Flush(e.ctx()))
	// ledger counts the account ledger's requests among reqs: its refs
	// read or deleted, and its updates pushed (a commit and its ref each)
	ledger := func(reqs []string) (refs, pushes int) {
		for _, r := range reqs {
			switch {
			case strings.Contains(r, "/git/matching-refs/mention-runner/pace/") || strings.Contains(r, "/git/refs/mention-runner/pace/") ||
				strings.Contains(r, "/commits/refs/mention-runner/pace/"):
				refs++
			case r == "POST /ops/control.git/git-receive-pack":
				pushes++
			}
		}
		return refs, pushes
	}

	// The warm-up's grant (a running process's first: its writes and the
	// next mention's whole, 10 slots) has 4 left: fewer than this
	// mention's writes and the next one's first two, so the next grant is
	// taken beside the thread's read, committed on the ledger's head as
	// this process wrote it (no read: writebudget's Guess), while this
	// mention writes from the one held.
	n := e.issue("x")
	c = e.comment(n, "alice", "@mrbot do it")
	reqs, trips := e.measureCost(d, e.trigger("issue_comment", n, c.GetID()))
	t.Logf("issue mention, running, taking the next grant ahead: %d requests, %d round trips: %v", len(reqs), trips, reqs)
	assert.Len(t, reqs, 6, "comments (the labels: read by the warm-up, cached); claim; dispatch; mark dispatched, 👀; ledger push")
	refs, pushes := ledger(reqs)
	assert.Equal(t, [2]int{0, 1}, [2]int{refs, pushes})
	assert.LessOrEqual(t, trips, 3)

	// Back to back: the grant taken (12 slots: a busy process's) covers
	// this mention and the next.
	n = e.issue("y")
	c = e.comment(n, "alice", "@mrbot and this")
	reqs, trips = e.measureCost(d, e.trigger("issue_comment", n, c.GetID()))
	t.Logf("issue mention, running, holding a grant: %d requests, %d round trips: %v", len(reqs), trips, reqs)
	assert.Len(t, reqs, 5, "comments; claim; dispatch; mark dispatched, 👀")
	assert.LessOrEqual(t, trips, 3)

	pr := e.pr("@mrbot review", "")
	reqs, trips = e.measureCost(d, e.trigger("pull_request", pr, 0))
	t.Logf("PR mention, running, holding a grant: %d requests, %d round trips: %v", len(reqs), trips, reqs)
	assert.Len(t, reqs, 8, "issue, comments, reviews, review comments; claim; dispatch; mark, 👀 (the diff is the runner's fetch job's read)")
	assert.LessOrEqual(t, trips, 3)

	// The grant has fewer than 6 slots left: the next is taken ahead.
	pr = e.pr("@mrbot review again", "")
	reqs, trips = e.measureCost(d, e.trigger("pull_request", pr, 0))
	t.Logf("PR mention, running, taking the next grant ahead: %d requests, %d round trips: %v", len(reqs), trips, reqs)
	assert.Len(t, reqs, 9, "issue, comments, reviews, review comments; claim; dispatch; mark, 👀; ledger push")
	refs, pushes = ledger(reqs)
	assert.Equal(t, [2]int{0, 1}, [2]int{refs, pushes})
	assert.LessOrEqual(t, trips, 3)

	// The runs are written to the rate state together.
	e.sim.ResetRequests()
	require.NoError(t, d.Flush(e.ctx()))
	assert.Equal(t, []string{"PUT /repos/ops/control/contents/.mention-runner/ratelimit.json"}, e.requestsExcept("/dispatches"))

	// Cold (event mode): opt-out list, rate state, ledger read with the
	// thread, the ledger in one request (the generation named for the
	// clock's hour: writebudget's named generations); every write waits
	// for the process's first grant, whose
	// commit is the claim commit (no commit of its own), pushed with the
	// ledger's ref (one request), so the claim follows it; the mark
	// points at the hour's shared
	// dispatched commit, which a process that has not seen it yet reads
	// beside the claim (and makes when missing: here the warm-up made it,
	// the dispatcher's own clock staying in the bubble's first hour); the
	// rate state written with the mark and the reaction.
	// fresh: one issue mention handled by a process of its own (event
	// mode), what each block below measures.
	fresh := func(title, body, when string) (*Dispatcher, []string, int) {
		n := e.issue(title)
		c := e.comment(n, "alice", body)
		d := e.wiredDispatcher(clk, func(c *Config) { c.FlushEach = true })
		reqs, trips := e.measureCost(d, e.trigger("issue_comment", n, c.GetID()))
		t.Logf("issue mention, fresh dispatcher%s: %d requests, %d round trips: %v", when, len(reqs), trips, reqs)
		return d, reqs, trips
	}
	cold, reqs, trips := fresh("z", "@mrbot do it again", "")
	assert.Len(t, reqs, 12, "comments, labels, opt-out list, rate state, ledger; push (the claim's commit, the ledger moved); claim, the hour's dispatched commit read; dispatch; mark, 👀, rate state")
	refs, pushes = ledger(reqs)
	assert.Equal(t, [2]int{1, 1}, [2]int{refs, pushes}, "ledger read; pushed (its commit the claim's)")
	assert.LessOrEqual(t, trips, 5)
	e.sim.ResetRequests()
	require.NoError(t, cold.Flush(e.ctx()))
	assert.Empty(t, e.requestsExcept(""), "nothing left to write")

	// The first mention of the next hour (the account is busy: the
	// mentions above): the hour's name is not there yet; the listing goes
	// beside a read of the hour before's name, which is the ledger; the
	// grant closes it, and the next generation is opened (root, ref,
	// listing) once the grant is held, beside the mention's last writes.
	clk.Advance(time.Hour)
	_, reqs, trips = fresh("hour", "@mrbot next hour", ", first of a busy hour")
	assert.Len(t, reqs, 16, "the 12 above; the hour before's name read, the listing; the next generation's root and ref pushed, listing")
	refs, pushes = ledger(reqs)
	assert.Equal(t, [2]int{4, 2}, [2]int{refs, pushes}, "hour's name, hour before's, listing, listing after the creation; grant and root pushed")
	assert.LessOrEqual(t, trips, 7)

	// Quiet: one mention two hours later. The generation stays under its
	// name (fewer than 3 grants in its hour and the one before: the hour
	// above took 1): read from the listing, no rotation; the closed
	// generation now three hours behind is deleted.
	clk.Advance(2 * time.Hour)
	_, reqs, trips = fresh("quiet", "@mrbot two hours on", ", two hours after the last")
	assert.Len(t, reqs, 16, "the 12 above; the hour before's name read, the listing, the ledger's commit; the deletion")
	refs, pushes = ledger(reqs)
	assert.Equal(t, [2]int{4, 1}, [2]int{refs, pushes}, "hour's name, hour before's, listing, deletion; the grant pushed")
	assert.LessOrEqual(t, trips, 7)
}

// TestLabelsCachedPerRepository: a running dispatcher reads a repository's
// labels once for mentions there within CacheTTL, and again after it.
func TestLabelsCachedPerRepository(t *testing.T) {
	e := newEnv(t)
	clk := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	d := e.dispatcher(func(c *Config) { c.Now = clk.Now })
	labelReads := func() int {
		n := 0
		for _, r := range e.sim.Requests() {
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/labels") {
				n++
			}
		}
		return n
	}
	for i, tc := range []struct {
		advance time.Duration
		reads   int
	}{
		{0, 1},                             // first mention: read
		{5 * time.Second, 1},               // within CacheTTL: cached
		{DefaultCacheTTL, 2},               // expired: read again
		{DefaultCacheTTL - time.Second, 2}, // cached again
	} {
		clk.Advance(tc.advance)
		n := e.issue(fmt.Sprintf("labels %d", i))
		c := e.comment(n, "alice", "@mrbot triage this")
		dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
		require.NoError(t, err)
		require.Equal(t, Dispatch, dec.Decision, dec.Reason)
		assert.Equal(t, tc.reads, labelReads(), "after mention %d", i)
	}
}
