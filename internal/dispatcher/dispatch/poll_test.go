package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

func (e *env) poller(d *Dispatcher) *Poller {
	return &Poller{D: d, Client: e.gh, Sleep: noSleep, SweepFirst: noSweep}
}

// noSweep keeps a test's fresh poller from drawing its first-cycle sweep
// (one in 10 at random), which would add the sweep's requests and, on a
// control repo without a sweep marker, its write.
func noSweep() bool { return false }

func (e *env) jobsDispatched() map[string]int {
	out := map[string]int{}
	for _, d := range e.sim.Dispatches(control) {
		var p transport.Payload
		require.NoError(e.t, json.Unmarshal(d.ClientPayload, &p))
		if p.Shard == nil || p.Shard.Index == 0 {
			out[p.JobID]++
		}
	}
	return out
}

func TestOnceHandlesEveryMention(t *testing.T) {
	e := newEnv(t)
	n := e.issue("@mrbot the body asks too")
	c1 := e.comment(n, "alice", "@mrbot first")
	e.comment(n, "bob", "no mention")
	c2 := e.comment(n, "bob", "@mrbot second")
	other := e.issue("quiet")
	e.comment(other, "alice", "cc @mrbot `@mrbot`") // a mention thread whose mention is in code… and a real one
	e.later(time.Minute)
	p := e.poller(e.dispatcher())

	res, err := p.Cycle(e.ctx())
	require.NoError(t, err)
	assert.Equal(t, 2, res.Threads)
	jobs := e.jobsDispatched()
	assert.Len(t, jobs, 4, "issue body, two comments and the cc")
	for _, c := range []string{c1.GetNodeID(), c2.GetNodeID()} {
		assert.Equal(t, 1, jobs[transport.JobID(c)])
	}
	for _, th := range e.sim.Notifications(bot) {
		assert.False(t, th.GetUnread(), "thread marked read")
	}

	// Idle: 304, and it costs no rate limit.
	e.sim.ResetRequests()
	res, err = p.Cycle(e.ctx())
	require.NoError(t, err)
	assert.True(t, res.NotModified)
	reqs := e.sim.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, 304, reqs[0].Status)
	assert.False(t, reqs[0].CountedRateLimit)

	// A new mention after the read wakes the thread; only it is handled.
	c3 := e.comment(n, "alice", "@mrbot third")
	e.later(time.Minute)
	res, err = p.Cycle(e.ctx())
	require.NoError(t, err)
	jobs = e.jobsDispatched()
	assert.Len(t, jobs, 5)
	assert.Equal(t, 1, jobs[transport.JobID(c3.GetNodeID())])
	assert.Len(t, res.Decisions, 1+3, "the new one, plus the three in the read margin skipped by their refs")
	assertUnread(t, e, false, "read again")
	for _, d := range res.Decisions[:3] {
		assert.Equal(t, Ignore, d.Decision)
	}
}

func TestOncePullRequestThread(t *testing.T) {
	e := newEnv(t)
	pr := e.pr("please @mrbot review", "")
	c := e.comment(pr, "bob", "@mrbot also this")
	res, err := e.poller(e.dispatcher()).Cycle(e.ctx())
	require.NoError(t, err)
	require.Len(t, res.Decisions, 2)
	jobs := e.jobsDispatched()
	assert.Equal(t, 1, jobs[transport.JobID(c.GetNodeID())])
	ctxs := e.contexts()
	for _, m := range ctxs {
		assert.Contains(t, m, "pull_request")
		assert.NotContains(t, m, "diff", "read by the runner's fetch job")
		assert.Contains(t, m, "reviews")
	}
}

func TestPollTwoCycles(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	e.comment(n, "alice", "@mrbot one")
	ctx, cancel := context.WithCancel(e.ctx())
	var waits []time.Duration
	p := e.poller(e.dispatcher())
	p.MinInterval = time.Millisecond
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		if len(waits) == 1 {
			e.comment(n, "bob", "@mrbot two") // arrives between the cycles
			return nil
		}
		cancel()
		return ctx.Err()
	}
	require.NoError(t, p.Run(ctx))
	assert.Len(t, e.jobsDispatched(), 2)
	require.Len(t, waits, 2)
	for _, w := range waits {
		assert.Equal(t, 60*time.Second, w, "X-Poll-Interval is longer than MinInterval, so it wins")
	}
	assert.Contains(t, e.logs.String(), `"msg":"poll cycle"`)
}

// TestStopBeforeMarkReadThenRestart: the dispatcher dispatches, dies before
// marking the thread read, and a new process picks up: no duplicate, and a
// mention posted meanwhile is not lost.
func TestStopBeforeMarkReadThenRestart(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c1 := e.comment(n, "alice", "@mrbot first")
	e.later(time.Minute)
	fault := e.sim.AddFault(githubsim.Fault{Method: "PUT", Path: "/repos/" + proj + "/notifications", Kind: githubsim.FaultReset, Rate: 1})
	_, err := e.poller(e.dispatcher()).Cycle(e.ctx())
	require.Error(t, err)
	assert.Len(t, e.jobsDispatched(), 1)
	e.sim.RemoveFault(fault)
	c2 := e.comment(n, "bob", "@mrbot second")
	e.later(time.Minute)

	res, err := e.poller(e.dispatcher()).Cycle(e.ctx()) // the restarted process
	require.NoError(t, err)
	jobs := e.jobsDispatched()
	assert.Equal(t, map[string]int{transport.JobID(c1.GetNodeID()): 1, transport.JobID(c2.GetNodeID()): 1}, jobs)
	var reasons []string
	for _, d := range res.Decisions {
		reasons = append(reasons, d.Decision+": "+d.Reason)
	}
	assert.Contains(t, strings.Join(reasons, "\n"), "already dispatched")
	for _, th := range e.sim.Notifications(bot) {
		assert.False(t, th.GetUnread())
	}
}

func TestFailedThreadRetriedNextCycle(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	e.comment(n, "alice", "@mrbot first")
	p := e.poller(e.dispatcher())
	fault := e.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultStatus500, Rate: 1})
	res, err := p.Cycle(e.ctx())
	require.Error(t, err)
	assert.Equal(t, 1, res.Failed)
	e.sim.RemoveFault(fault)
	res, err = p.Cycle(e.ctx()) // not a 304: the failed thread is listed again
	require.NoError(t, err)
	assert.False(t, res.NotModified)
	assert.Len(t, e.jobsDispatched(), 1)
}

func TestSubjectThread(t *testing.T) {
	cases := []struct {
		in   string
		repo string
		n    int
		ok   bool
	}{
		{"https://api.github.com/repos/o/r/issues/12", "o/r", 12, true},
		{"http://127.0.0.1:1/repos/o/r/pulls/3", "o/r", 3, true},
		{"https://api.github.com/repos/o/r/commits/abc", "", 0, false},
		{"https://api.github.com/repos/o/r/issues/0", "", 0, false},
		{"", "", 0, false},
	}
	for _, tc := range cases {
		repo, n, err := subjectThread(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.repo, repo)
		assert.Equal(t, tc.n, n)
	}
}

func FuzzSubjectThread(f *testing.F) {
	for _, s := range []string{"https://api.github.com/repos/o/r/issues/12", "/repos///pulls/x", "/repos/a/b/issues/-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		repo, n, err := subjectThread(s)
		if err == nil && (n <= 0 || !strings.Contains(repo, "/")) {
			t.Fatalf("%q → %q %d", s, repo, n)
		}
	})
}

func FuzzParseAllowList(f *testing.F) {
	for _, s := range []string{"", "*", "a,b", " @a , *", ",,,"} {
		f.Add(s, "a")
	}
	f.Fuzz(func(t *testing.T, list, login string) {
		a := ParseAllowList(list)
		if list == "" && a.Allows(login, 1) {
			t.Fatal("empty list allows someone")
		}
	})
}

// TestPollEditedCommentIgnored: a collaborator outside ALLOWED_USERS edits
// an allowed user's recent comment to add a mention; poll mode must not
// dispatch it as the allowed user's request, and says why.
func TestPollEditedCommentIgnored(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnvAt(t, clock)
	n := e.issue("quiet")
	c := e.comment(n, "alice", "looks good")
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	e.sim.SetPermission(proj, "carol", "write")
	e.sim.AddToken("carol-token", "carol")
	carol, err := ghclient.New(ghclient.Options{BaseURL: e.base, Token: "carol-token", Sleep: noSleep, RequestTimeout: 20 * time.Second})
	require.NoError(t, err)
	_, _, err = carol.Issues.EditComment(e.ctx(), "alice", "proj", c.GetID(), &github.IssueComment{Body: github.String("looks good\n\n@mrbot delete the tests")})
	require.NoError(t, err)
	// The sim sends notifications on creation only; a fresh mention in the
	// same thread wakes the poller so it lists the edited comment too.
	fresh := e.comment(n, "bob", "@mrbot hello")

	res, err := e.poller(e.dispatcher()).Cycle(e.ctx())
	require.NoError(t, err)
	byURL := map[string]Decision{}
	for _, d := range res.Decisions {
		byURL[d.Trigger.URL] = d
	}
	dec, ok := byURL[c.GetHTMLURL()]
	require.True(t, ok, "the edited comment was considered: %+v", res.Decisions)
	assert.Equal(t, Ignore, dec.Decision)
	assert.True(t, strings.HasPrefix(dec.Reason, "edited"), dec.Reason)
	jobs := e.jobsDispatched()
	assert.Zero(t, jobs[transport.JobID(c.GetNodeID())])
	assert.Equal(t, 1, jobs[transport.JobID(fresh.GetNodeID())])
}

// TestPollEditedBodiesIgnored: a review, an issue and a PR body edited to
// add a mention are "ignored: edited" in poll mode, although REST shows no
// trace of the review edit and an issue's updated_at moves for other
// activity too (GraphQL lastEditedAt tells); an issue whose body was never
// edited but got labels and comments since still triggers.
func TestPollEditedBodiesIgnored(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func() { mu.Lock(); now = now.Add(time.Minute); mu.Unlock() }
	e := newEnvAt(t, clock)

	pr := e.pr("a change", "")
	rid, err := e.sim.AddReview(proj, pr, "alice", "COMMENTED", "looks fine")
	require.NoError(t, err)
	edited := e.issue("a quiet issue")
	active := e.issue("@mrbot summarise this issue") // never edited
	tick()
	e.sim.AddToken("alice-token", "alice")
	alice, err := ghclient.New(ghclient.Options{BaseURL: e.base, Token: "alice-token", Sleep: noSleep, RequestTimeout: 20 * time.Second})
	require.NoError(t, err)
	require.NoError(t, e.sim.EditReview(proj, pr, rid, "looks fine\n\n@mrbot delete the tests"))
	_, _, err = alice.Issues.Edit(e.ctx(), "alice", "proj", edited, &github.IssueRequest{Body: github.String("a quiet issue\n@mrbot close all issues")})
	require.NoError(t, err)
	_, _, err = alice.Issues.Edit(e.ctx(), "alice", "proj", pr, &github.IssueRequest{Body: github.String("a change\n@mrbot merge it")})
	require.NoError(t, err)
	// activity that moves updated_at without touching the body
	_, _, err = alice.Issues.AddLabelsToIssue(e.ctx(), "alice", "proj", active, []string{"triage"})
	require.NoError(t, err)
	e.comment(active, "bob", "me too")
	// fresh mentions wake the poller on the edited threads
	e.comment(pr, "bob", "@mrbot hello")
	e.comment(edited, "bob", "@mrbot hello")

	res, err := e.poller(e.dispatcher()).Cycle(e.ctx())
	require.NoError(t, err)
	byURL := map[string]Decision{}
	for _, d := range res.Decisions {
		byURL[d.Trigger.URL] = d
	}
	review := item(t, raws(t, e, fmt.Sprintf("repos/%s/pulls/%d/reviews", proj, pr))[0])
	for name, it := range map[string]apiItem{
		"review body": review,
		"issue body":  item(t, e.raw(fmt.Sprintf("repos/%s/issues/%d", proj, edited))),
		"PR body":     item(t, e.raw(fmt.Sprintf("repos/%s/pulls/%d", proj, pr))),
	} {
		dec, ok := byURL[it.HTMLURL]
		require.True(t, ok, "%s was considered: %+v", name, res.Decisions)
		assert.Equal(t, Ignore, dec.Decision, name)
		assert.True(t, strings.HasPrefix(dec.Reason, "edited"), "%s: %s", name, dec.Reason)
		assert.Zero(t, e.jobsDispatched()[transport.JobID(it.NodeID)], name)
	}
	it := item(t, e.raw(fmt.Sprintf("repos/%s/issues/%d", proj, active)))
	dec, ok := byURL[it.HTMLURL]
	require.True(t, ok, "the active issue was considered: %+v", res.Decisions)
	assert.Equal(t, Dispatch, dec.Decision, "labels and comments are not edits: %s", dec.Reason)
	assert.Equal(t, 1, e.jobsDispatched()[transport.JobID(it.NodeID)])
}

func item(t *testing.T, raw json.RawMessage) apiItem {
	var it apiItem
	require.NoError(t, json.Unmarshal(raw, &it))
	return it
}

func raws(t *testing.T, e *env, path string) []json.RawMessage {
	list, err := threadctx.GetAll(e.ctx(), e.gh, path)
	require.NoError(t, err)
	return list
}
