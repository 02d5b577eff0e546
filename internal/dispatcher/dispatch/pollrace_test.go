package dispatch

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// injectOnce serves the simulator and, once, posts a comment at a chosen
// point of a poll cycle: before or after the first request that matches.
type injectOnce struct {
	next   http.Handler
	method string
	path   string // exact request path
	before bool   // inject before the request is served (else after)
	post   func()

	mu   sync.Mutex
	done bool
}

func (h *injectOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fire := false
	h.mu.Lock()
	if !h.done && r.Method == h.method && r.URL.Path == h.path {
		h.done, fire = true, true
	}
	h.mu.Unlock()
	if fire && h.before {
		h.post()
	}
	h.next.ServeHTTP(w, r)
	if fire && !h.before {
		h.post()
	}
}

func (e *env) clientAt(base string) *github.Client {
	c, err := ghclient.New(ghclient.Options{BaseURL: base, Token: botToken, Sleep: noSleep, MaxRetries: 2, RequestTimeout: 20 * time.Second})
	require.NoError(e.t, err)
	return c
}

// TestMentionDuringCycleIsNotLost: a mention posted while a cycle handles
// its thread (after the listing, after the thread's comments were read, or
// just before the repository's threads are marked read) is dispatched
// once: by that cycle when it saw it, else by the next run, since the
// thread stays unread (it was updated after the listing). Issue and pull
// request threads.
func TestMentionDuringCycleIsNotLost(t *testing.T) {
	points := []struct {
		name   string
		method string
		path   func(number int) string
		before bool
		seen   bool // the cycle's look at the thread sees the late mention
	}{
		{"after the listing", http.MethodGet, func(int) string { return "/notifications" }, false, true},
		{"after the comments were read", http.MethodGet, func(n int) string { return fmt.Sprintf("/repos/%s/issues/%d/comments", proj, n) }, false, false},
		{"just before mark-read", http.MethodPut, func(int) string { return "/repos/" + proj + "/notifications" }, true, false},
		{"just after mark-read", http.MethodPut, func(int) string { return "/repos/" + proj + "/notifications" }, false, false},
	}
	for _, pr := range []bool{false, true} {
		for _, pt := range points {
			name := "issue/" + pt.name
			if pr {
				name = "pr/" + pt.name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				var n int
				if pr {
					n = e.pr("a change", "")
				} else {
					n = e.issue("a bug")
				}
				c1 := e.comment(n, "alice", "@mrbot first")
				e.later(time.Minute) // the next poll
				var late *github.IssueComment
				h := &injectOnce{next: e.sim.Handler(), method: pt.method, path: pt.path(n), before: pt.before,
					post: func() { late = e.comment(n, "bob", "@mrbot late") }}
				srv := httptest.NewServer(h)
				defer srv.Close()
				through := e.clientAt(srv.URL)
				d, err := New(e.cfg, Clients{GitHub: through, Dispatch: e.dsp})
				require.NoError(t, err)

				_, err = (&Poller{D: d, Client: through, Sleep: noSleep, SweepFirst: noSweep}).Cycle(e.ctx())
				require.NoError(t, err)
				require.NotNil(t, late, "the comment was injected")
				first := map[string]int{transport.JobID(c1.GetNodeID()): 1}
				if pt.seen {
					first[transport.JobID(late.GetNodeID())] = 1
				}
				assert.Equal(t, first, e.jobsDispatched())
				assertUnread(t, e, true, "a thread updated after the listing stays unread")

				// The next run (a new process) dispatches what is left, and
				// nothing twice.
				e.later(time.Minute)
				d2, err := New(e.cfg, Clients{GitHub: e.gh, Dispatch: e.dsp})
				require.NoError(t, err)
				_, err = e.poller(d2).Cycle(e.ctx())
				require.NoError(t, err)
				want := map[string]int{transport.JobID(c1.GetNodeID()): 1, transport.JobID(late.GetNodeID()): 1}
				assert.Equal(t, want, e.jobsDispatched())
				assertUnread(t, e, false, "all handled: read")
			})
		}
	}
}

func assertUnread(t *testing.T, e *env, unread bool, msg string) {
	t.Helper()
	threads := e.sim.Notifications(bot)
	require.NotEmpty(t, threads)
	for _, th := range threads {
		assert.Equal(t, unread, th.GetUnread(), msg)
	}
}

// TestLateMentionFailingIsDispatchedByNextRun: a `dispatcher once` run
// dispatches a thread's first mention, and the dispatch of a mention
// posted after the listing fails however often it is tried. The run
// fails and exits; GitHub still shows the thread unread, so the next run
// dispatches the late mention, once, and skips the first.
func TestLateMentionFailingIsDispatchedByNextRun(t *testing.T) {
	e := newEnv(t)
	n := e.issue("a bug")
	c1 := e.comment(n, "alice", "@mrbot first")
	e.later(time.Minute)
	var late *github.IssueComment
	var fault int
	// The late mention arrives after the listing; once the first mention's
	// dispatch is answered, the control repo refuses dispatches.
	failing := &injectOnce{next: e.sim.Handler(), method: http.MethodPost, path: "/repos/" + control + "/dispatches",
		post: func() {
			fault = e.sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/repos/" + control + "/dispatches", Kind: githubsim.FaultStatus500, Rate: 1})
		}}
	h := &injectOnce{next: failing, method: http.MethodGet, path: "/notifications", post: func() { late = e.comment(n, "bob", "@mrbot late") }}
	srv := httptest.NewServer(h)
	defer srv.Close()
	through := e.clientAt(srv.URL)
	d, err := New(e.cfg, Clients{GitHub: through, Dispatch: e.clientAt(srv.URL)})
	require.NoError(t, err)

	res, err := (&Poller{D: d, Client: through, Sleep: noSleep, SweepFirst: noSweep}).Once(e.ctx())
	require.Error(t, err)
	assert.Equal(t, 1, res.Failed)
	assert.Equal(t, map[string]int{transport.JobID(c1.GetNodeID()): 1}, e.jobsDispatched())
	assertUnread(t, e, true, "GitHub keeps the thread unread: the next run finds the late mention")

	e.sim.RemoveFault(fault)
	e.later(time.Minute)
	res, err = e.poller(e.dispatcher()).Once(e.ctx())
	require.NoError(t, err)
	assert.Equal(t, 1, res.Threads)
	assert.Equal(t, map[string]int{transport.JobID(c1.GetNodeID()): 1, transport.JobID(late.GetNodeID()): 1}, e.jobsDispatched())
	var reasons []string
	for _, dec := range res.Decisions {
		reasons = append(reasons, dec.Decision+": "+dec.Reason)
	}
	assert.Contains(t, strings.Join(reasons, "\n"), "already dispatched", "the first mention is skipped by its ref")
	assertUnread(t, e, false, "all handled: read")
}

// TestFailedThreadKeepsOthersOfItsRepo: threads of one repository are
// marked read together, up to a time; one that failed holds that time
// before its own last update, so it stays unread while an older thread of
// the same repository and every thread of another repository are marked.
func TestFailedThreadKeepsOthersOfItsRepo(t *testing.T) {
	e := newEnv(t)
	older := e.issue("@mrbot older")
	e.later(time.Minute)
	bad := e.pr("@mrbot newer", "")
	_, err := e.sim.AddRepo("alice/other", false)
	require.NoError(t, err)
	otherN, err := e.sim.CreateIssue("alice/other", "alice", "x", "@mrbot elsewhere")
	require.NoError(t, err)
	e.later(time.Minute)
	// The newer thread, a pull request, cannot be read.
	fault := e.sim.AddFault(githubsim.Fault{Method: http.MethodGet, Path: fmt.Sprintf("/repos/%s/pulls/%d", proj, bad), Kind: githubsim.FaultStatus500, Rate: 1})
	res, err := e.poller(e.dispatcher()).Cycle(e.ctx())
	require.Error(t, err)
	assert.Equal(t, 1, res.Failed)
	unread := map[string]bool{}
	for _, th := range e.sim.Notifications(bot) {
		unread[th.GetSubject().GetURL()] = th.GetUnread()
	}
	assert.Equal(t, map[string]bool{
		e.base + fmt.Sprintf("repos/%s/issues/%d", proj, older):     false,
		e.base + fmt.Sprintf("repos/%s/pulls/%d", proj, bad):        true,
		e.base + fmt.Sprintf("repos/alice/other/issues/%d", otherN): false,
	}, unread)

	e.sim.RemoveFault(fault)
	e.later(time.Minute)
	res, err = e.poller(e.dispatcher()).Cycle(e.ctx())
	require.NoError(t, err)
	assert.Equal(t, 1, res.Threads, "only the failed thread is listed again")
	assert.Len(t, e.jobsDispatched(), 3)
	assertUnread(t, e, false, "all handled: read")
}
