package refstate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

const sweepPrefix = "refs/mention-runner/test/"

// sweepFixture is a store holding expired refs (old-0 …), refs too young
// to sweep (new-0 …) and old refs Keep spares (kept-0 …).
type sweepFixture struct {
	st  *refstate.Store
	sim *githubsim.Sim
	clk *fakeclock.Clock
	// expired, young, kept: ref → the commit it holds
	expired, young, kept map[string]string
}

func newSweepFixture(t *testing.T, expired, young, kept int, maxUpdates int) sweepFixture {
	t.Helper()
	st, sim, clk := newStore(t)
	ctx := ctxT(t)
	f := sweepFixture{st: st, sim: sim, clk: clk, expired: map[string]string{}, young: map[string]string{}, kept: map[string]string{}}
	mk := func(into map[string]string, name, status string, n int) {
		for i := range n {
			ref := fmt.Sprintf("%s%s-%d", sweepPrefix, name, i)
			m, err := st.NewMark(ctx, status, ref, "") // a holder of its own: a commit of its own
			require.NoError(t, err)
			_, created, err := st.Create(ctx, ref, m)
			require.NoError(t, err)
			require.True(t, created)
			into[ref] = m.Commit
		}
	}
	mk(f.expired, "old", "done", expired)
	mk(f.kept, "kept", "running", kept)
	clk.Advance(8 * 24 * time.Hour)
	mk(f.young, "new", "done", young)
	if maxUpdates >= 0 {
		// through the store's client, as the commands wire it: its
		// transport would repeat a push whose answer is lost
		p, err := refpush.New(st.Client.Client(), sim.URL(), "tok")
		require.NoError(t, err)
		p.Timeout = 2 * time.Second
		p.MaxUpdates = maxUpdates
		st.Push = p
	}
	return f
}

func (f sweepFixture) options() refstate.SweepOptions {
	return refstate.SweepOptions{Prefix: sweepPrefix, MaxAge: 7 * 24 * time.Hour,
		Keep: func(m refstate.Mark) bool { return m.Status == "running" }}
}

// pushes counts the receive-pack requests since the request log's from.
func pushes(sim *githubsim.Sim, from int) (n int) {
	for _, r := range sim.Requests()[from:] {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git-receive-pack") {
			n++
		}
	}
	return n
}

// writes is the account's content writes so far (a push is one).
func (f sweepFixture) writes() int { return len(f.sim.ContentWrites()["ops"]) }

// refs is every ref under the prefix and the commit it holds.
func (f sweepFixture) refs(t *testing.T) map[string]string {
	t.Helper()
	got, err := f.st.List(ctxT(t), sweepPrefix)
	require.NoError(t, err)
	return got
}

// survivors is what must be left after a sweep: the young and kept refs.
func (f sweepFixture) survivors() map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{f.young, f.kept} {
		for r, c := range m {
			out[r] = c
		}
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSweepWrites: a sweep deletes exactly the expired refs; with Push it
// writes once per refpush.Client.MaxUpdates of them, without it once per
// ref.
func TestSweepWrites(t *testing.T) {
	tests := []struct {
		name       string
		expired    int
		maxUpdates int // -1: no Push (REST, a DELETE a ref)
		writes     int
	}{
		{"REST: a write a ref", 6, -1, 6},
		{"push: one write", 6, 0, 1},
		{"push: one expired ref", 1, 0, 1},
		{"push: nothing expired, nothing written", 0, 0, 0},
		{"push: the cap reached exactly", 6, 3, 2},
		{"push: more than the cap, ceil(N/cap) pushes", 7, 3, 3},
		{"REST: 250 refs", 250, -1, 250},
		{"push: 250 refs at the default cap of 100", 250, 0, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSweepFixture(t, tc.expired, 3, 2, tc.maxUpdates)
			before := f.writes()
			res, err := f.st.Sweep(ctxT(t), f.options())
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Equal(t, tc.writes, f.writes()-before)
			t.Logf("%s: a sweep of %d expired refs (of %d listed): %d content writes", tc.name, tc.expired, res.Listed, f.writes()-before)
			assert.ElementsMatch(t, keys(f.expired), res.Deleted)
			assert.Equal(t, f.survivors(), f.refs(t))
		})
	}
}

// TestSweepLeavesMovedRef: a ref that moves between the listing and the
// delete is judged by a state it no longer holds; the push's delete names
// the commit listed, so the ref survives and the others go.
func TestSweepLeavesMovedRef(t *testing.T) {
	f := newSweepFixture(t, 4, 1, 1, 0)
	ctx := ctxT(t)
	moved := sweepPrefix + "old-2"
	// Keep runs after the listing and before the deletes: the ref moves on
	// there, as a writer taking it over would (through the REST API, so
	// that the only push is the sweep's).
	var once sync.Once
	var newer string
	o := f.options()
	o.Keep = func(m refstate.Mark) bool {
		if m.Commit == f.expired[moved] {
			once.Do(func() {
				c, _, err := f.st.Client.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String("mention-runner state: claimed\n\nholder: taker\n"),
					Tree: &github.Tree{SHA: github.String(refstate.EmptyTree)}, Parents: []*github.Commit{{SHA: github.String(m.Commit)}}}, nil)
				require.NoError(t, err)
				newer = c.GetSHA()
				_, _, err = f.st.Client.Git.UpdateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(moved), Object: &github.GitObject{SHA: github.String(newer)}}, false)
				require.NoError(t, err)
			})
		}
		return m.Status == "running"
	}
	before := len(f.sim.Requests())
	res, err := f.st.Sweep(ctx, o)
	require.NoError(t, err)
	require.Len(t, res.Errors, 1)
	assert.ErrorIs(t, res.Errors[0], refpush.ErrRejected)
	assert.Contains(t, res.Errors[0].Error(), moved)
	assert.NotContains(t, res.Deleted, moved)
	assert.Len(t, res.Deleted, 3)
	assert.Equal(t, 1, pushes(f.sim, before), "one push")

	want := f.survivors()
	want[moved] = newer
	assert.Equal(t, want, f.refs(t))
}

// TestSweepLostAnswer: a push whose answer is lost, before or after it
// landed, is not repeated; the next sweep deletes what is left, and
// nothing else is deleted by either.
func TestSweepLostAnswer(t *testing.T) {
	tests := []struct {
		name       string
		kind       githubsim.FaultKind
		afterApply bool
		maxUpdates int
	}{
		{"502 after it landed", githubsim.FaultStatus502, true, 0},
		{"reset after it landed", githubsim.FaultReset, true, 0},
		{"502 before it landed", githubsim.FaultStatus502, false, 0},
		{"the first of two pushes lost after it landed", githubsim.FaultStatus502, true, 3},
		{"the first of two pushes lost before it landed", githubsim.FaultReset, false, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSweepFixture(t, 5, 2, 2, tc.maxUpdates)
			ctx := ctxT(t)
			f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: tc.kind, OnCall: 1, AfterApply: tc.afterApply})
			before := len(f.sim.Requests())
			res, err := f.st.Sweep(ctx, f.options())
			require.NoError(t, err)
			assert.Equal(t, 1, pushes(f.sim, before), "the lost push is not repeated, nor the rest sent")
			assert.Empty(t, res.Deleted, "no push answered: none known deleted")
			require.Len(t, res.Errors, 1, "one error for the refs a failed push left")
			assert.True(t, refpush.MaybeApplied(res.Errors[0]), "%v", res.Errors[0])
			left := f.refs(t)
			for r, c := range f.survivors() {
				assert.Equal(t, c, left[r], "%s survives the lost push", r)
			}

			res, err = f.st.Sweep(ctx, f.options())
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Equal(t, f.survivors(), f.refs(t), "the next sweep leaves exactly the survivors")
			for _, r := range res.Deleted {
				assert.Contains(t, f.expired, r)
			}
		})
	}
}

// TestSweepAlong: Along is given the expired refs and what it returns is
// deleted in the same push; its error leaves its refs but not the
// expired ones; without Push, or with nothing expired, it is not asked.
func TestSweepAlong(t *testing.T) {
	const other = "refs/mention-runner/other/"
	for _, tc := range []struct {
		name      string
		expired   int
		push      bool
		fail      bool
		asked     bool
		writes    int
		along     int // the other refs deleted
		errs      int
		leftOther int
	}{
		{"with the expired, one push", 3, true, false, true, 1, 3, 0, 0},
		{"its error leaves its refs", 3, true, true, true, 1, 0, 1, 3},
		{"nothing expired: not asked", 0, true, false, false, 0, 0, 0, 0},
		{"REST: not asked", 3, false, false, false, 3, 0, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maxUpdates := -1
			if tc.push {
				maxUpdates = 0
			}
			f := newSweepFixture(t, tc.expired, 2, 0, maxUpdates)
			ctx := ctxT(t)
			listed := map[string]string{} // the other ref of each expired one
			for ref := range f.expired {
				o := other + strings.TrimPrefix(ref, sweepPrefix)
				m, err := f.st.NewMark(ctx, "done", o, "")
				require.NoError(t, err)
				_, _, err = f.st.Create(ctx, o, m)
				require.NoError(t, err)
				listed[ref] = o
			}
			all, err := f.st.List(ctx, other)
			require.NoError(t, err)
			asked := false
			opt := f.options()
			opt.Along = func(_ context.Context, expired []string) ([]refpush.Update, error) {
				asked = true
				assert.ElementsMatch(t, keys(f.expired), expired)
				if tc.fail {
					return nil, errors.New("listing failed")
				}
				var dels []refpush.Update
				for _, r := range expired {
					dels = append(dels, refpush.Update{Ref: listed[r], Old: all[listed[r]]})
				}
				return dels, nil
			}
			before := f.writes()
			res, err := f.st.Sweep(ctx, opt)
			require.NoError(t, err)
			assert.Equal(t, tc.asked, asked)
			assert.Len(t, res.Deleted, tc.expired, "the expired refs go either way")
			assert.Len(t, res.Along, tc.along)
			assert.Len(t, res.Errors, tc.errs)
			assert.Equal(t, tc.writes, f.writes()-before)
			assert.Len(t, f.sim.Refs("ops/control", other), tc.leftOther)
			assert.Equal(t, f.survivors(), f.refs(t))
		})
	}
}

// TestSweepReadsEachCommitOnce: refs sharing a commit (claims made with
// one claim commit, marks at the hour's shared commit) cost one read of
// it, and count once against MaxChecks: 30 refs on 2 commits are all
// judged with MaxChecks 2, and swept in one push.
func TestSweepReadsEachCommitOnce(t *testing.T) {
	st, sim, clk := newPushStore(t, true)
	ctx := ctxT(t)
	rest, err := refstate.New(st.Client, "ops/control", clk.Now)
	require.NoError(t, err)
	var want []string
	for c := range 2 {
		m, err := rest.NewMark(ctx, "claimed", fmt.Sprintf("dispatcher-%d", c), "")
		require.NoError(t, err)
		for i := range 15 {
			ref := fmt.Sprintf("%sshared-%d-%d", sweepPrefix, c, i)
			_, created, err := rest.Create(ctx, ref, m)
			require.NoError(t, err)
			require.True(t, created)
			want = append(want, ref)
		}
	}
	clk.Advance(8 * 24 * time.Hour)
	// a fresh store: it knows none of the commits
	fresh, err := refstate.New(st.Client, "ops/control", clk.Now)
	require.NoError(t, err)
	fresh.Push = st.Push
	from := len(sim.Requests())
	res, err := fresh.Sweep(ctx, refstate.SweepOptions{Prefix: sweepPrefix, MaxAge: 7 * 24 * time.Hour, MaxChecks: 2})
	require.NoError(t, err)
	assert.Empty(t, res.Errors)
	assert.Equal(t, 2, res.Checked)
	assert.ElementsMatch(t, want, res.Deleted)
	reads := 0
	for _, r := range sim.Requests()[from:] {
		if r.Method == http.MethodGet && strings.Contains(r.Path, "/git/commits/") {
			reads++
		}
	}
	assert.Equal(t, 2, reads, "one read a commit")
	assert.Equal(t, 1, pushes(sim, from))
}
