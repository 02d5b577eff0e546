package refstate_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const receivePack = "/ops/control.git/git-receive-pack"

// newStoreWith returns a store on a new simulator, writing through a
// pusher when push is set. retries: whether its client repeats a request
// whose answer was lost (the runner's does).
func newStoreWith(t *testing.T, push, retries bool) (*refstate.Store, *githubsim.Sim, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 3, Now: clk.Now})
	sim.AddUser("ops")
	sim.AddToken("tok", "ops")
	_, err := sim.AddRepo("ops/control", true)
	require.NoError(t, err)
	o := ghclient.Options{BaseURL: base, Token: "tok", RetryUnsafe: true, Sleep: clk.Sleep, Now: clk.Now, RequestTimeout: 2 * time.Second}
	if !retries {
		o.MaxRetries = -1
	}
	gh, err := ghclient.New(o)
	require.NoError(t, err)
	st, err := refstate.New(gh, "ops/control", clk.Now)
	require.NoError(t, err)
	if push {
		st.Push, err = refpush.New(gh.Client(), base, "tok")
		require.NoError(t, err)
	}
	return st, sim, clk
}

func newPushStore(t *testing.T, retries bool) (*refstate.Store, *githubsim.Sim, *fakeclock.Clock) {
	t.Helper()
	return newStoreWith(t, true, retries)
}

// With a pusher a new state is one request: no commit is created first,
// and the state reads back as set.
func TestPushCreateNewOneRequest(t *testing.T) {
	st, sim, _ := newPushStore(t, true)
	ctx := ctxT(t)
	cur, created, err := st.CreateNew(ctx, ref, "running", "run 5")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Len(t, sim.Requests(), 1, "one push, nothing else")
	assert.Len(t, sim.ContentWrites()["ops"], 1)

	got, err := st.Read(ctx, ref)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, cur, *got)

	cur2, created, err := st.CreateNew(ctx, ref, "running", "run 9")
	require.NoError(t, err)
	assert.False(t, created, "the ref exists: the create is refused")
	assert.Equal(t, "run 5", cur2.Holder)
	assert.Equal(t, cur.Commit, cur2.Commit)
}

// A push whose answer is lost after it landed is recognised as ours, by
// a client that repeats it and by one that does not; nothing is doubled.
func TestPushCreateLostAnswer(t *testing.T) {
	type tc struct {
		kind    githubsim.FaultKind
		retries bool
	}
	var tests []tc
	for _, k := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		tests = append(tests, tc{k, true}, tc{k, false})
	}
	for _, c := range tests {
		name := string(c.kind)
		if !c.retries {
			name += " no retries"
		}
		t.Run(name, func(t *testing.T) {
			st, sim, _ := newPushStore(t, c.retries)
			ctx := ctxT(t)
			sim.AddFault(githubsim.Fault{Method: "POST", Path: receivePack, Kind: c.kind, OnCall: 1, AfterApply: true, Delay: 10 * time.Millisecond})
			cur, created, err := st.CreateNew(ctx, ref, "running", "run 5")
			require.NoError(t, err)
			assert.True(t, created, "our own state, recognised after the lost answer")
			got, err := st.Read(ctx, ref)
			require.NoError(t, err)
			assert.Equal(t, cur.Commit, got.Commit)

			cur, created, err = st.CreateNew(ctx, ref, "running", "run 9")
			require.NoError(t, err)
			assert.False(t, created)
			assert.Equal(t, "run 5", cur.Holder)
		})
	}
}

// A push refused as a whole (no permission) applied nothing and says so.
func TestPushCreateRefused(t *testing.T) {
	st, sim, _ := newPushStore(t, false)
	ctx := ctxT(t)
	sim.AddFault(githubsim.Fault{Method: "POST", Path: receivePack, Kind: githubsim.FaultStatus502, OnCall: 1})
	_, _, err := st.CreateNew(ctx, ref, "running", "run 5")
	require.Error(t, err, "a 502 before anything was applied: the ref is missing")
	got, rerr := st.Read(ctx, ref)
	require.NoError(t, rerr)
	assert.Nil(t, got)
	_, created, err := st.CreateNew(ctx, ref, "running", "run 5")
	require.NoError(t, err)
	assert.True(t, created, "tried again, it lands")
}

// Of writers creating one ref at once, exactly one creates it and every
// other reads that one's state.
func TestPushCreateRace(t *testing.T) {
	st, _, _ := newPushStore(t, true)
	ctx := ctxT(t)
	const n = 6
	var wg sync.WaitGroup
	created := make([]bool, n)
	holders := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			var cur refstate.Mark
			cur, created[i], errs[i] = st.CreateNew(ctx, ref, "running", "run "+string(rune('a'+i)))
			holders[i] = cur.Holder
		})
	}
	wg.Wait()
	won := 0
	for i := range n {
		require.NoError(t, errs[i])
		if created[i] {
			won++
		}
	}
	assert.Equal(t, 1, won)
	for i := range n {
		assert.Equal(t, holders[0], holders[i], "every writer sees the winner")
	}
}

// Advance with a pusher is an exact compare-and-swap in one request; a
// lost answer after it landed is success, and a writer from a state the
// ref left loses.
func TestPushAdvance(t *testing.T) {
	tests := []struct {
		name    string
		fault   githubsim.FaultKind // "" = none
		stale   bool                // another writer advanced first
		gone    bool                // the ref was deleted first
		wantErr error
	}{
		{name: "from its state"},
		{name: "502 after it landed", fault: githubsim.FaultStatus502},
		{name: "reset after it landed", fault: githubsim.FaultReset},
		{name: "hang after it landed", fault: githubsim.FaultHang},
		{name: "another writer first", stale: true, wantErr: refstate.ErrLost},
		{name: "the ref is gone", gone: true, wantErr: refstate.ErrLost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, sim, clk := newPushStore(t, false)
			ctx := ctxT(t)
			first, created, err := st.CreateNew(ctx, ref, "claimed", "a")
			require.NoError(t, err)
			require.True(t, created)
			clk.Advance(time.Second)
			mine, err := st.NewMark(ctx, "dispatched", "a", first.Commit)
			require.NoError(t, err)
			theirs, err := st.NewMark(ctx, "dispatched", "b", first.Commit)
			require.NoError(t, err)
			if tc.stale {
				_, err := st.Advance(ctx, ref, theirs)
				require.NoError(t, err)
			}
			if tc.gone {
				require.NoError(t, st.Delete(ctx, ref))
			}
			if tc.fault != "" {
				sim.AddFault(githubsim.Fault{Method: "POST", Path: receivePack, Kind: tc.fault, OnCall: 1, AfterApply: true, Delay: 10 * time.Millisecond})
			}
			before := pushes(sim, 0)
			cur, err := st.Advance(ctx, ref, mine)
			assert.Equal(t, 1, pushes(sim, 0)-before, "one request")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				if tc.stale {
					assert.Equal(t, theirs.Commit, cur.Commit, "the winner's state")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, mine.Commit, cur.Commit)
			got, err := st.Read(ctx, ref)
			require.NoError(t, err)
			assert.Equal(t, mine.Commit, got.Commit)
			_, err = st.Advance(ctx, ref, theirs)
			assert.True(t, errors.Is(err, refstate.ErrLost), "the loser from the same state: %v", err)
		})
	}
}
