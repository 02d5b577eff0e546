package dispatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

// longPoll is one scheduled run of `dispatcher poll --for`: its own
// dispatcher (its own process), the same bot token and control repo, and a
// virtual clock that each wait advances by the wait asked for. A wait
// returns when the test feeds the run a step, so the test decides how the
// runs interleave without depending on speed.
type longPoll struct {
	mu     sync.Mutex
	now    time.Time
	waits  []time.Duration
	gate   chan struct{}
	exited chan struct{}
	err    error
	world  func(time.Duration) // moves GitHub's clock on with each wait
}

func (l *longPoll) Now() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now
}

func (l *longPoll) sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	l.now = l.now.Add(d)
	l.waits = append(l.waits, d)
	l.mu.Unlock()
	l.world(d)
	select {
	case <-l.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// step lets the run finish n waits (fewer when it ends first).
func (l *longPoll) step(n int) {
	for i := 0; i < n; i++ {
		select {
		case l.gate <- struct{}{}:
		case <-l.exited:
			return
		}
	}
}

// wait returns the run's result once it ended by itself.
func (l *longPoll) wait() error {
	<-l.exited
	return l.err
}

func (e *env) startLongPoll(ctx context.Context, window time.Duration) *longPoll {
	l := &longPoll{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), gate: make(chan struct{}), exited: make(chan struct{}), world: e.later}
	d := e.dispatcher(func(c *Config) { c.RatePerHour = 1000 })
	p := &Poller{D: d, Client: e.gh, MinInterval: time.Second, Now: l.Now, Until: l.Now().Add(window), Sleep: l.sleep, SweepFirst: noSweep}
	go func() {
		l.err = p.Run(ctx)
		close(l.exited)
	}()
	return l
}

// TestOverlappingLongPollsHandleEachMentionOnce: a scheduled long-poll run
// is still polling when the next one starts; mentions keep arriving before,
// during and after the overlap. Every mention is dispatched exactly once,
// each run waits GitHub's X-Poll-Interval between cycles, and each ends by
// itself when its window is over.
func TestOverlappingLongPollsHandleEachMentionOnce(t *testing.T) {
	// 40 mentions: 12 before run A starts, 8 while only A polls, 12 while
	// both poll (over 8 cycles: several land in the same cycle of both), 8
	// after A ends.
	const mentions = 40
	e := newEnv(t)
	e.sim.SetRequestLogLimit(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Each mention opens its own thread: half in a new issue's body, half in
	// the first comment of a quiet issue.
	var nodeIDs []string
	post := func(i int) {
		if i%2 == 0 {
			n, err := e.sim.CreateIssue(proj, "alice", fmt.Sprintf("task %d", i), fmt.Sprintf("@mrbot task %d", i))
			require.NoError(t, err)
			is, ok := e.sim.Issue(proj, n)
			require.True(t, ok)
			nodeIDs = append(nodeIDs, is.GetNodeID())
			return
		}
		n := e.issue(fmt.Sprintf("quiet %d", i))
		nodeIDs = append(nodeIDs, e.comment(n, "bob", fmt.Sprintf("@mrbot task %d", i)).GetNodeID())
	}
	// 30 virtual minutes at 60 s per cycle: 30 cycles each.
	const window = 30 * time.Minute
	both := func(a, b *longPoll, n int) {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); a.step(n) }()
		go func() { defer wg.Done(); b.step(n) }()
		wg.Wait()
	}

	for i := 0; i < 12; i++ {
		post(i) // before run A starts
	}
	a := e.startLongPoll(ctx, window)
	a.step(3)
	for i := 12; i < 20; i++ {
		post(i) // only run A is polling
	}
	a.step(3)
	b := e.startLongPoll(ctx, window) // the next scheduled run starts early
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); both(a, b, 8) }()
	for i := 20; i < 32; i++ {
		post(i) // both are polling
	}
	wg.Wait()
	both(a, b, 4)
	a.step(1000)
	require.NoError(t, a.wait(), "run A ends by itself when its window is over")
	for i := 32; i < mentions; i++ {
		post(i) // only run B is left
	}
	b.step(1000)
	require.NoError(t, b.wait())

	jobs := e.jobsDispatched()
	assert.Len(t, jobs, mentions)
	for i, id := range nodeIDs {
		assert.Equal(t, 1, jobs[transport.JobID(id)], "mention %d dispatched exactly once", i)
	}
	assert.Len(t, e.sim.Refs(control, contract.DispatchedRefPrefix), mentions, "one claim per mention")
	for _, run := range []*longPoll{a, b} {
		for _, w := range run.waits {
			assert.Equal(t, 60*time.Second, w, "X-Poll-Interval (60 s) beats MinInterval (1 s)")
		}
		assert.Equal(t, time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC), run.Now(), "no wait crosses the window's end")
		assert.Len(t, run.waits, 30, "the run polled through its whole window")
	}
}
