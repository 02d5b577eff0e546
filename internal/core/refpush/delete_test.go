package refpush_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// TestDeleteAll: DeleteAll sends DefaultMaxUpdates deletes a push (or the
// client's MaxUpdates), each one a compare-and-swap against its Old; bad
// input sends nothing; a push failed as a whole stops the rest.
func TestDeleteAll(t *testing.T) {
	tests := []struct {
		name       string
		refs       int
		maxUpdates int
		stale      int  // the refs given a wrong Old
		badInput   bool // one update has a New
		fault      bool // the first push's answer is lost after it landed
		pushes     int
		left       int // refs left after
	}{
		{"the default cap: ceil(250/100) pushes", 250, 0, 0, false, false, 3, 0},
		{"a cap of the client's", 7, 3, 0, false, false, 3, 0},
		{"a stale Old is left", 5, 0, 2, false, false, 1, 2},
		{"bad input sends nothing", 5, 0, 0, true, false, 0, 5},
		{"a lost answer stops the rest", 7, 3, 0, false, true, 1, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := ctxT(t)
			f.push.MaxUpdates = tc.maxUpdates
			c, other := commit("c"), commit("other")
			dels := f.refsAt(t, tc.refs, c, other)
			for i := range tc.stale {
				dels[i].Old = other.SHA()
			}
			if tc.badInput {
				dels[1].New = c.SHA()
			}
			if tc.fault {
				f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true})
			}
			before := len(f.sim.Requests())
			errs := f.push.DeleteAll(ctx, "ops/control", dels)
			require.Len(t, errs, tc.refs)
			assert.Equal(t, tc.pushes, posts(f.sim, before))
			left := 0
			for i, d := range dels {
				if f.refAt(t, d.Ref) != "" {
					left++
					assert.Error(t, errs[i], d.Ref)
				}
				switch {
				case i < tc.stale:
					assert.ErrorIs(t, errs[i], refpush.ErrRejected)
				case tc.fault:
					assert.True(t, refpush.MaybeApplied(errs[i]), "%v", errs[i])
				case tc.badInput:
					assert.Error(t, errs[i])
				default:
					assert.NoError(t, errs[i])
				}
			}
			assert.Equal(t, tc.left, left)
		})
	}
}

// TestDeleteListedWith: a rider goes in the first push beside the deletes
// (within MaxUpdates), whatever happens to it the deletes are made, a
// lost answer is its error too, and with nothing to delete nothing is
// sent.
func TestDeleteListedWith(t *testing.T) {
	tests := []struct {
		name       string
		refs       int
		maxUpdates int
		riderOld   string // "stale": the rider's Old is not the ref's value
		fault      bool   // the first push's answer is lost after it landed
		pushes     int
		riderOK    bool
	}{
		{name: "one push, the rider in it", refs: 5, pushes: 1, riderOK: true},
		{name: "the rider counts against the cap", refs: 7, maxUpdates: 3, pushes: 3, riderOK: true},
		{name: "a refused rider leaves the deletes be", refs: 5, riderOld: "stale", pushes: 1},
		{name: "a lost answer is the rider's error", refs: 5, fault: true, pushes: 1},
		{name: "nothing to delete: nothing sent", refs: 0, pushes: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := ctxT(t)
			f.push.MaxUpdates = tc.maxUpdates
			c, marker := commit("c"), commit("marker")
			dels := append(f.refsAt(t, tc.refs, c), refpush.Update{}) // and a ref kept
			rider := &refpush.Rider{Commits: []refpush.Commit{marker}, Update: refpush.Update{Ref: "refs/mention-runner/marker", New: marker.SHA()}}
			if tc.riderOld == "stale" {
				rider.Update.Old = c.SHA()
			}
			if tc.fault {
				f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true})
			}
			before := len(f.sim.Requests())
			deleted, riderErr, problems := f.push.DeleteListedWith(ctx, "ops/control", dels, rider)
			assert.Equal(t, tc.pushes, posts(f.sim, before))
			if tc.riderOK {
				assert.NoError(t, riderErr)
				assert.Equal(t, marker.SHA(), f.refAt(t, rider.Update.Ref))
			} else {
				assert.Error(t, riderErr)
			}
			if tc.refs == 0 {
				assert.ErrorIs(t, riderErr, refpush.ErrNotSent)
				assert.False(t, refpush.MaybeApplied(riderErr))
			}
			if tc.fault {
				assert.True(t, refpush.MaybeApplied(riderErr), "%v", riderErr)
				assert.Len(t, problems, 1)
				return
			}
			assert.Empty(t, problems)
			for i, d := range dels[:tc.refs] {
				assert.True(t, deleted[i], d.Ref)
				assert.Empty(t, f.refAt(t, d.Ref), d.Ref)
			}
			assert.False(t, deleted[tc.refs], "the ref kept")
		})
	}
}

// refsAt creates n refs at c in one push (with the commits given, c
// first) and returns a delete of each from c.
func (f fixture) refsAt(t *testing.T, n int, commits ...refpush.Commit) []refpush.Update {
	t.Helper()
	var creates, dels []refpush.Update
	for i := range n {
		r := fmt.Sprintf("refs/mention-runner/test/r%03d", i)
		creates = append(creates, refpush.Update{Ref: r, New: commits[0].SHA()})
		dels = append(dels, refpush.Update{Ref: r, Old: commits[0].SHA()})
	}
	if n == 0 {
		return nil
	}
	res, err := f.push.Push(ctxT(t), "ops/control", commits, creates)
	require.NoError(t, err)
	for _, e := range res {
		require.NoError(t, e)
	}
	return dels
}

// posts counts the POST requests (pushes) since the request log's from.
func posts(sim *githubsim.Sim, from int) (n int) {
	for _, r := range sim.Requests()[from:] {
		if r.Method == "POST" {
			n++
		}
	}
	return n
}
