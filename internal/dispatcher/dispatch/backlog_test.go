package dispatch

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/clock"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// backlogCost is what `dispatcher once` spent on a backlog.
type backlogCost struct {
	Requests, RoundTrips, Unread, Dispatched int
	Took                                     time.Duration
}

// runBacklog seeds n unread mention threads, dispatches all but one in
// ten of them beforehand (a dispatcher that dispatched and then went
// down before marking them read), and runs `dispatcher once` over them
// as cmd/dispatcher wires it, every request 50 ms long. It runs in a
// synctest bubble: the time taken is the bubble's.
func runBacklog(t *testing.T, n int) backlogCost {
	var got backlogCost
	synctest.Test(t, func(t *testing.T) {
		e := newEnvInMemory(t)
		e.sim.SetPrimaryLimit(1 << 30) // seeding is not what is measured
		e.cfg.RatePerHour = 10 * n     // one author asks for them all
		before := e.dispatcher()
		for i := range n {
			num := e.issue(fmt.Sprintf("thread %d", i))
			c := e.comment(num, "alice", fmt.Sprintf("@mrbot task %d", i))
			if i%10 != 0 {
				_, err := before.Handle(e.ctx(), e.trigger("issue_comment", num, c.GetID()))
				require.NoError(t, err)
			}
		}
		dispatchedBefore := len(e.jobsDispatched())
		time.Sleep(5 * time.Minute) // the dispatcher was down a while
		o := e.ledgerOptions()
		o.Now, o.Sleep = time.Now, clock.Sleep
		l, err := writebudget.New(o)
		require.NoError(t, err)
		p := ghclient.NewPacer(0, 0, 0, time.Now, clock.Sleep).Share(l)
		d, err := New(e.cfg, Clients{GitHub: e.pacedClient(false, p), Control: e.pacedClient(true, p), Dispatch: e.pacedClient(true, p), Budget: l})
		require.NoError(t, err)
		e.sim.ResetRequests()
		e.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: 50 * time.Millisecond})
		ctx, cancel := context.WithTimeout(t.Context(), 12*time.Hour) // the bubble's hours
		defer cancel()
		start := time.Now()
		_, err = e.poller(d).Once(ctx)
		require.NoError(t, err)
		got.Took = time.Since(start)
		reqs := e.sim.Requests()
		got.Requests, got.RoundTrips = len(reqs), githubsim.RoundTrips(reqs)
		for _, th := range e.sim.Notifications(bot) {
			if th.GetUnread() {
				got.Unread++
			}
		}
		got.Dispatched = len(e.jobsDispatched()) - dispatchedBefore
	})
	return got
}

// TestBacklogOnce: `dispatcher once` after downtime, over N unread
// threads of which 90% were dispatched already, leaves none unread, sends
// only the new mentions, and takes minutes: it lists the claims once and
// handles threads side by side. Each size prints its bench row.
func TestBacklogOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a 500-thread backlog: make test runs it")
	}
	for _, tc := range []struct {
		n, maxRequests int
		maxTook        time.Duration
	}{
		{10, 110, 2 * time.Minute},
		{100, 450, 3 * time.Minute},
		{500, 2000, 10 * time.Minute},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			c := runBacklog(t, tc.n)
			row := fmt.Sprintf("| dispatcher once, backlog of %d unread threads (90%% dispatched before) | %d requests | %d round trips | %s simulated | %d left unread |",
				tc.n, c.Requests, c.RoundTrips, c.Took.Round(time.Second), c.Unread)
			t.Log(row)
			// cmd/benchreport reads this line (make bench)
			fmt.Printf("backlog-bench n=%d requests=%d roundtrips=%d seconds=%.0f unread=%d\n",
				tc.n, c.Requests, c.RoundTrips, c.Took.Seconds(), c.Unread)
			assert.Zero(t, c.Unread, "every thread marked read")
			assert.Equal(t, tc.n/10, c.Dispatched, "only the new mentions are sent")
			assert.Less(t, c.Took, tc.maxTook)
			assert.LessOrEqual(t, c.Requests, tc.maxRequests)
		})
	}
}
