package refstate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
)

func newStore(t *testing.T) (*refstate.Store, *githubsim.Sim, *fakeclock.Clock) {
	t.Helper()
	return newStoreWith(t, false, true)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

const ref = "refs/mention-runner/test/job"

// A create whose answer is lost every time is still recognised as ours.
func TestCreateLostAnswerIsOurs(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		t.Run(string(kind), func(t *testing.T) {
			st, sim, _ := newStore(t)
			ctx := ctxT(t)
			m, err := st.NewMark(ctx, "claimed", "me", "")
			require.NoError(t, err)
			sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/*/*/git/refs", Kind: kind, OnCall: 1, AfterApply: true, Delay: 10 * time.Millisecond})
			cur, created, err := st.Create(ctx, ref, m)
			require.NoError(t, err)
			assert.True(t, created, "our own claim, recognised after the lost answer")
			assert.Equal(t, m.Commit, cur.Commit)

			other, err := st.NewMark(ctx, "claimed", "someone else", "")
			require.NoError(t, err)
			cur, created, err = st.Create(ctx, ref, other)
			require.NoError(t, err)
			assert.False(t, created)
			assert.Equal(t, "me", cur.Holder)
			assert.Equal(t, "claimed", cur.Status)
		})
	}
}

// Of several writers advancing from the same state, exactly one wins,
// and a repeated advance whose answer was lost succeeds.
func TestAdvanceIsCompareAndSwap(t *testing.T) {
	st, sim, _ := newStore(t)
	ctx := ctxT(t)
	first, err := st.NewMark(ctx, "claimed", "a", "")
	require.NoError(t, err)
	_, created, err := st.Create(ctx, ref, first)
	require.NoError(t, err)
	require.True(t, created)

	const n = 6
	var wg sync.WaitGroup
	wins := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer has its own holder name: identical commits
			// would be one object, and each writer would think it won.
			m, err := st.NewMark(ctx, "claimed", fmt.Sprintf("taker-%d", i), first.Commit)
			if err != nil {
				return
			}
			_, err = st.Advance(ctx, ref, m)
			wins[i] = err == nil
			if err != nil {
				assert.ErrorIs(t, err, refstate.ErrLost)
			}
		}()
	}
	wg.Wait()
	won := 0
	for _, w := range wins {
		if w {
			won++
		}
	}
	assert.Equal(t, 1, won, "exactly one takeover wins")

	cur, err := st.Read(ctx, ref)
	require.NoError(t, err)
	done, err := st.NewMark(ctx, "dispatched", cur.Holder, cur.Commit)
	require.NoError(t, err)
	sim.AddFault(githubsim.Fault{Method: "PATCH", Path: "/repos/*/*/git/refs/*", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true})
	got, err := st.Advance(ctx, ref, done)
	require.NoError(t, err)
	assert.Equal(t, "dispatched", got.Status)

	// A stale writer (based on the first state) loses and learns the state.
	stale, err := st.NewMark(ctx, "dispatched", "a", first.Commit)
	require.NoError(t, err)
	got, err = st.Advance(ctx, ref, stale)
	require.ErrorIs(t, err, refstate.ErrLost)
	assert.Equal(t, "dispatched", got.Status)
}

func TestReadMissingAndCorrupt(t *testing.T) {
	st, _, _ := newStore(t)
	ctx := ctxT(t)
	m, err := st.Read(ctx, ref)
	require.NoError(t, err)
	assert.Nil(t, m)

	// A ref at a commit that is not a state commit (a fresh store does not
	// know it) is reported, not taken for a state.
	head, _, err := st.Client.Git.GetRef(ctx, "ops", "control", "heads/main")
	require.NoError(t, err)
	_, _, err = st.Client.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(ref), Object: head.Object})
	require.NoError(t, err)
	_, err = st.Read(ctx, ref)
	var ce *refstate.CorruptError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Contains(t, err.Error(), "delete it")
}

func TestSweepDeletesOldStates(t *testing.T) {
	st, _, clk := newStore(t)
	ctx := ctxT(t)
	mk := func(name, status string) {
		m, err := st.NewMark(ctx, status, "h", "")
		require.NoError(t, err)
		_, created, err := st.Create(ctx, "refs/mention-runner/test/"+name, m)
		require.NoError(t, err)
		require.True(t, created)
	}
	mk("old-done", "done")
	mk("old-running", "running")
	clk.Sleep(ctx, 8*24*time.Hour)
	mk("new-done", "done")
	res, err := st.Sweep(ctx, refstate.SweepOptions{Prefix: "refs/mention-runner/test/", MaxAge: 7 * 24 * time.Hour,
		Keep: func(m refstate.Mark) bool { return m.Status == "running" }})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Listed)
	assert.Equal(t, []string{"refs/mention-runner/test/old-done"}, res.Deleted)
	assert.Empty(t, res.Errors)
	_, err = st.Sweep(ctx, refstate.SweepOptions{Prefix: "refs/x"})
	assert.Error(t, err)
}
