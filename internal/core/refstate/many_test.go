package refstate_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// pushStore is a store that writes with one push per change, and one
// that does not, on the same repository.
func pushStore(t *testing.T) (withPush, rest *refstate.Store, sim *githubsim.Sim) {
	t.Helper()
	withPush, sim, clk := newPushStore(t, true)
	rest, err := refstate.New(withPush.Client, "ops/control", clk.Now)
	require.NoError(t, err)
	return withPush, rest, sim
}

// claimAll claims ref/NAME for each name with one claim commit (REST, as
// an older dispatcher did) and returns it with what SetSharedMany takes.
func claimAll(t *testing.T, st *refstate.Store, names ...string) (refstate.Mark, map[string]string) {
	t.Helper()
	ctx := ctxT(t)
	claim, err := st.NewMark(ctx, "claimed", "me", "")
	require.NoError(t, err)
	from := map[string]string{}
	for _, name := range names {
		_, created, err := st.Create(ctx, ref+"/"+name, claim)
		require.NoError(t, err)
		require.True(t, created)
		from[ref+"/"+name] = claim.Commit
	}
	return claim, from
}

// Many claims are marked in one push; one taken over meanwhile is left to
// its new holder, one marked already counts as marked.
func TestSetSharedMany(t *testing.T) {
	st, rest, sim := pushStore(t)
	ctx := ctxT(t)
	claim, from := claimAll(t, rest, "a", "b", "taken", "done")
	other, err := rest.NewMark(ctx, "claimed", "another dispatcher", claim.Commit)
	require.NoError(t, err)
	_, err = rest.Advance(ctx, ref+"/taken", other)
	require.NoError(t, err)
	_, err = rest.SetShared(ctx, ref+"/done", "dispatched")
	require.NoError(t, err)

	before := len(sim.ContentWrites()["ops"])
	failed, err := st.SetSharedMany(ctx, "dispatched", from)
	require.NoError(t, err)
	assert.Equal(t, 1, len(sim.ContentWrites()["ops"])-before, "one push for every ref")
	require.Len(t, failed, 1)
	assert.ErrorIs(t, failed[ref+"/taken"], refstate.ErrLost)
	for _, name := range []string{"a", "b", "done"} {
		m, err := rest.Read(ctx, ref+"/"+name)
		require.NoError(t, err)
		assert.Equal(t, "dispatched", m.Status, name)
	}
	m, err := rest.Read(ctx, ref+"/taken")
	require.NoError(t, err)
	assert.Equal(t, other.Commit, m.Commit, "a takeover is not overwritten")
}

// A push whose answer is lost is sent again (the client retries it): the
// repeat's updates are refused, the refs read and found set.
func TestSetSharedManyLostAnswer(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset} {
		t.Run(string(kind), func(t *testing.T) {
			st, rest, sim := pushStore(t)
			ctx := ctxT(t)
			_, from := claimAll(t, rest, "a", "b")
			sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/ops/control.git/git-receive-pack", Kind: kind, OnCall: 1, AfterApply: true})
			failed, err := st.SetSharedMany(ctx, "dispatched", from)
			require.NoError(t, err)
			assert.Empty(t, failed)
			for name := range from {
				m, err := rest.Read(ctx, name)
				require.NoError(t, err)
				assert.Equal(t, "dispatched", m.Status, name)
			}
		})
	}
}

// Without a pusher each ref is set on its own, as SetShared does.
func TestSetSharedManyWithoutPush(t *testing.T) {
	_, rest, sim := pushStore(t)
	ctx := ctxT(t)
	_, from := claimAll(t, rest, "a", "b")
	failed, err := rest.SetSharedMany(context.WithoutCancel(ctx), "dispatched", from)
	require.NoError(t, err)
	assert.Empty(t, failed)
	for name := range from {
		m, err := rest.Read(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, "dispatched", m.Status)
	}
	_ = sim
}

// TestStatesWhenPushesRefused: a server that refuses pushes as such gets
// every state write through the REST API instead (refpush.ForAPI): a new
// state, a move from it, the marks, a sweep.
func TestStatesWhenPushesRefused(t *testing.T) {
	st, sim, clk := newPushStore(t, true)
	ctx := ctxT(t)
	p, err := refpush.ForAPI(st.Client, "tok")
	require.NoError(t, err)
	st.Push = p
	sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: receivePack, Kind: githubsim.FaultText, Rate: 1})

	cur, created, err := st.CreateNew(ctx, ref+"/a", "claimed", "me")
	require.NoError(t, err)
	require.True(t, created)
	next, err := st.NewMark(ctx, "released", "me", cur.Commit)
	require.NoError(t, err)
	_, err = st.Advance(ctx, ref+"/a", next)
	require.NoError(t, err)
	_, created, err = st.CreateNew(ctx, ref+"/b", "claimed", "me")
	require.NoError(t, err)
	require.True(t, created)
	b, err := st.Read(ctx, ref+"/b")
	require.NoError(t, err)
	failed, err := st.SetSharedMany(ctx, "dispatched", map[string]string{ref + "/b": b.Commit})
	require.NoError(t, err)
	assert.Empty(t, failed)
	got, err := st.Read(ctx, ref+"/b")
	require.NoError(t, err)
	assert.Equal(t, "dispatched", got.Status)

	clk.Advance(8 * 24 * time.Hour)
	res, err := st.Sweep(ctx, refstate.SweepOptions{Prefix: ref + "/", MaxAge: 7 * 24 * time.Hour})
	require.NoError(t, err)
	assert.Empty(t, res.Errors)
	assert.ElementsMatch(t, []string{ref + "/a", ref + "/b"}, res.Deleted)
}
