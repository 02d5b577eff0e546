package refstate_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// gate holds the first push after it is armed until it is opened: the
// Creates made meanwhile queue for the next push.
type gate struct {
	base    http.RoundTripper
	armed   atomic.Bool
	once    sync.Once
	entered chan struct{}
	open    chan struct{}
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.armed.Load() && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.entered)
			<-g.open
		}
	}
	return g.base.RoundTrip(r)
}

// gatedStore is a pushing store whose first push waits on the gate.
func gatedStore(t *testing.T) (*refstate.Store, *githubsim.Sim, *gate) {
	t.Helper()
	st, sim, _ := newPushStore(t, true)
	g := &gate{base: st.Client.Client().Transport, entered: make(chan struct{}), open: make(chan struct{})}
	p, err := refpush.New(&http.Client{Transport: g}, refpush.ServerFromAPI(st.Client.BaseURL), "tok")
	require.NoError(t, err)
	st.Push = p
	return st, sim, g
}

// waitQueued yields until n Creates wait for the push in flight.
func waitQueued(ctx context.Context, t *testing.T, st *refstate.Store, n int) {
	t.Helper()
	for st.WaitingCreates() < n {
		require.NoError(t, ctx.Err(), "waiting for %d queued creates", n)
		runtime.Gosched()
	}
}

type createAnswer struct {
	cur     refstate.Mark
	created bool
	err     error
}

// Creates made while a push is in flight go together in the next push,
// and each caller gets the answer a lone Create gives: created, the
// other holder's state, its own state from an earlier try, or the
// server's refusal.
func TestCreateTogether(t *testing.T) {
	st, sim, g := gatedStore(t)
	ctx := ctxT(t)
	plain := ctx // without Together: one push each, as before
	mine, err := st.NewMark(ctx, "claimed", "me", "")
	require.NoError(t, err)
	theirs, err := st.NewMark(ctx, "claimed", "them", "")
	require.NoError(t, err)
	const p = "refs/mention-runner/test/"
	for ref, m := range map[string]refstate.Mark{p + "exists": theirs, p + "mine": mine, p + "dir": theirs} {
		_, created, err := st.Create(plain, ref, m)
		require.NoError(t, err)
		require.True(t, created)
	}
	tests := []struct {
		ref         string
		wantCreated bool
		wantCommit  string
		wantErr     string
	}{
		{ref: p + "new1", wantCreated: true, wantCommit: mine.Commit},
		{ref: p + "new2", wantCreated: true, wantCommit: mine.Commit},
		{ref: p + "new3", wantCreated: true, wantCommit: mine.Commit},
		{ref: p + "new4", wantCreated: true, wantCommit: mine.Commit},
		{ref: p + "new5", wantCreated: true, wantCommit: mine.Commit},
		{ref: p + "exists", wantCommit: theirs.Commit},
		{ref: p + "mine", wantCreated: true, wantCommit: mine.Commit},
		// a ref under an existing one: git refuses it, and it is missing
		{ref: p + "dir/x", wantErr: "refused, and the ref does not exist"},
	}
	before := pushes(sim, 0)
	g.armed.Store(true)
	tctx := refstate.Together(ctx)
	lead := make(chan createAnswer, 1)
	go func() {
		cur, created, err := st.Create(tctx, p+"first", mine)
		lead <- createAnswer{cur, created, err}
	}()
	<-g.entered
	got := make([]createAnswer, len(tests))
	var wg sync.WaitGroup
	for i, tc := range tests {
		wg.Go(func() {
			got[i].cur, got[i].created, got[i].err = st.Create(tctx, tc.ref, mine)
		})
	}
	waitQueued(ctx, t, st, len(tests))
	close(g.open)
	wg.Wait()
	first := <-lead
	require.NoError(t, first.err)
	assert.True(t, first.created)
	for i, tc := range tests {
		if tc.wantErr != "" {
			assert.ErrorContains(t, got[i].err, tc.wantErr, tc.ref)
			continue
		}
		require.NoError(t, got[i].err, tc.ref)
		assert.Equal(t, tc.wantCreated, got[i].created, tc.ref)
		assert.Equal(t, tc.wantCommit, got[i].cur.Commit, tc.ref)
	}
	assert.Equal(t, 2, pushes(sim, 0)-before, "the first create alone, then the %d made meanwhile together", len(tests))
}

// A shared push whose answer is lost after it landed: each ref is read
// back, and every claim is created once and reported created.
func TestCreateTogetherLostAnswer(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		t.Run(string(kind), func(t *testing.T) {
			st, sim, g := gatedStore(t)
			ctx := ctxT(t)
			mine, err := st.NewMark(ctx, "claimed", "me", "")
			require.NoError(t, err)
			const p = "refs/mention-runner/test/"
			tctx := refstate.Together(ctx)
			g.armed.Store(true)
			lead := make(chan error, 1)
			go func() {
				_, created, err := st.Create(tctx, p+"first", mine)
				if err == nil && !created {
					err = assert.AnError
				}
				lead <- err
			}()
			<-g.entered
			// the second push (the batch) lands, and its answer is lost
			sim.AddFault(githubsim.Fault{Method: "POST", Path: receivePack, Kind: kind, OnCall: 2, AfterApply: true, Delay: 10 * time.Millisecond})
			const n = 8
			got := make([]createAnswer, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					got[i].cur, got[i].created, got[i].err = st.Create(tctx, p+"job"+string(rune('a'+i)), mine)
				})
			}
			waitQueued(ctx, t, st, n)
			close(g.open)
			wg.Wait()
			require.NoError(t, <-lead)
			refs, err := st.List(ctx, p)
			require.NoError(t, err)
			assert.Len(t, refs, n+1)
			for i := range n {
				require.NoError(t, got[i].err)
				assert.True(t, got[i].created, "job %d: ours, recognised after the lost answer", i)
				assert.Equal(t, mine.Commit, refs[p+"job"+string(rune('a'+i))])
			}
			assert.LessOrEqual(t, pushes(sim, 0), 3, "the first, the batch and at most one retry of it")
		})
	}
}
