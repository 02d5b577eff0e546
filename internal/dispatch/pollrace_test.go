package dispatch

import (
	"context"
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

	"github.com/mention-runner/mention-runner/internal/ghclient"
	"github.com/mention-runner/mention-runner/internal/githubsim"
	"github.com/mention-runner/mention-runner/internal/transport"
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
// its thread (after the listing, after the thread's comments were read,
// or just before the thread is marked read, which covers it) is
// dispatched in that same cycle, once; a later cycle dispatches nothing
// twice. Issue and pull request threads.
func TestMentionDuringCycleIsNotLost(t *testing.T) {
	points := []struct {
		name   string
		method string
		path   func(number int) string
		before bool
	}{
		{"after the listing", http.MethodGet, func(int) string { return "/notifications" }, false},
		{"after the comments were read", http.MethodGet, func(n int) string { return fmt.Sprintf("/repos/%s/issues/%d/comments", proj, n) }, false},
		{"just before mark-read", http.MethodPatch, nil, true},
	}
	for _, pr := range []bool{false, true} {
		for _, pt := range points {
			name := "issue/" + pt.name
			if pr {
				name = "pr/" + pt.name
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				var n int
				if pr {
					n = e.pr("a change", "")
				} else {
					n = e.issue("a bug")
				}
				c1 := e.comment(n, "alice", "@mrbot first")
				threads := e.sim.Notifications(bot)
				require.Len(t, threads, 1)
				path := "/notifications/threads/" + threads[0].GetID()
				if pt.path != nil {
					path = pt.path(n)
				}
				var late *github.IssueComment
				h := &injectOnce{next: e.sim.Handler(), method: pt.method, path: path, before: pt.before,
					post: func() { late = e.comment(n, "bob", "@mrbot late") }}
				srv := httptest.NewServer(h)
				defer srv.Close()
				through := e.clientAt(srv.URL)
				d, err := New(e.cfg, Clients{GitHub: through, Dispatch: e.dsp})
				require.NoError(t, err)

				_, err = (&Poller{D: d, Client: through, Sleep: noSleep}).Cycle(e.ctx())
				require.NoError(t, err)
				require.NotNil(t, late, "the comment was injected")
				want := map[string]int{transport.JobID(c1.GetNodeID()): 1, transport.JobID(late.GetNodeID()): 1}
				assert.Equal(t, want, e.jobsDispatched(), "both mentions dispatched in the cycle that saw the thread")

				// The next cron run: nothing new, nothing twice.
				d2, err := New(e.cfg, Clients{GitHub: e.gh, Dispatch: e.dsp})
				require.NoError(t, err)
				_, err = e.poller(d2).Cycle(e.ctx())
				require.NoError(t, err)
				assert.Equal(t, want, e.jobsDispatched())
			})
		}
	}
}

// TestMentionFailedAfterMarkReadRetried: the second look finds a mention
// posted just before mark-read, and dispatching it fails; the thread is
// read by then, so the poller keeps it and its next cycle (a 304 for the
// listing) dispatches it.
func TestMentionFailedAfterMarkReadRetried(t *testing.T) {
	e := newEnv(t)
	n := e.issue("a bug")
	c1 := e.comment(n, "alice", "@mrbot first")
	threads := e.sim.Notifications(bot)
	require.Len(t, threads, 1)
	var late *github.IssueComment
	// The late mention arrives just before mark-read, and from then on
	// the control repo refuses dispatches until the fault is removed.
	var fault int
	h := &injectOnce{next: e.sim.Handler(), method: http.MethodPatch, path: "/notifications/threads/" + threads[0].GetID(), before: true,
		post: func() {
			late = e.comment(n, "bob", "@mrbot late")
			fault = e.sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/repos/" + control + "/dispatches", Kind: githubsim.FaultStatus500, Rate: 1})
		}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	through := e.clientAt(srv.URL)
	d, err := New(e.cfg, Clients{GitHub: through, Dispatch: e.dsp})
	require.NoError(t, err)
	p := &Poller{D: d, Client: through, Sleep: noSleep}

	res, err := p.Cycle(e.ctx())
	require.Error(t, err)
	assert.Equal(t, 1, res.Failed)
	assert.Equal(t, map[string]int{transport.JobID(c1.GetNodeID()): 1}, e.jobsDispatched())
	assert.Contains(t, e.logs.String(), "retried in the next cycles of this process")
	for _, th := range e.sim.Notifications(bot) {
		assert.False(t, th.GetUnread(), "GitHub shows the thread read: only the poller remembers the late mention")
	}

	e.sim.RemoveFault(fault)
	res, err = p.Cycle(e.ctx())
	require.NoError(t, err)
	assert.Equal(t, 1, res.Threads, "the kept thread")
	assert.Equal(t, map[string]int{transport.JobID(c1.GetNodeID()): 1, transport.JobID(late.GetNodeID()): 1}, e.jobsDispatched())
	var reasons []string
	for _, dec := range res.Decisions {
		reasons = append(reasons, dec.Decision+": "+dec.Reason)
	}
	assert.Contains(t, strings.Join(reasons, "\n"), "already dispatched", "the first mention is skipped by its ref")

	res, err = p.Cycle(e.ctx())
	require.NoError(t, err)
	assert.Zero(t, res.Threads, "nothing kept any more")
}

// TestOnceRetriesKeptThread: `dispatcher once` has no next cycle, so Once
// cycles again (after a wait) for a thread it kept, until it is done.
func TestOnceRetriesKeptThread(t *testing.T) {
	e := newEnv(t)
	n := e.issue("a bug")
	c1 := e.comment(n, "alice", "@mrbot first")
	threads := e.sim.Notifications(bot)
	require.Len(t, threads, 1)
	var late *github.IssueComment
	var fault int
	h := &injectOnce{next: e.sim.Handler(), method: http.MethodPatch, path: "/notifications/threads/" + threads[0].GetID(), before: true,
		post: func() {
			late = e.comment(n, "bob", "@mrbot late")
			fault = e.sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/repos/" + control + "/dispatches", Kind: githubsim.FaultStatus500, Rate: 1})
		}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	through := e.clientAt(srv.URL)
	d, err := New(e.cfg, Clients{GitHub: through, Dispatch: e.dsp})
	require.NoError(t, err)
	var waits []time.Duration
	p := &Poller{D: d, Client: through, Sleep: func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		if len(waits) == 2 {
			e.sim.RemoveFault(fault) // the control repo recovers before the second retry
		}
		return ctx.Err()
	}}
	res, err := p.Once(e.ctx())
	require.NoError(t, err)
	assert.Equal(t, onceRetryWaits, waits, "still failing after the first wait, done after the second")
	assert.Zero(t, res.Failed)
	assert.Equal(t, map[string]int{transport.JobID(c1.GetNodeID()): 1, transport.JobID(late.GetNodeID()): 1}, e.jobsDispatched())

	// Nothing kept: Once is a single cycle.
	waits = nil
	_, err = p.Once(e.ctx())
	require.NoError(t, err)
	assert.Empty(t, waits)
}
