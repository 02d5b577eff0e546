package refstate_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// writesBy counts the write requests (POST, PATCH, DELETE) the simulator
// answered with a success since from.
func writesBy(sim *githubsim.Sim, from int) (n int) {
	for _, r := range sim.Requests()[from:] {
		if r.Method != "GET" && (r.Status < 300 || r.AppliedStatus > 0 && r.AppliedStatus < 300) {
			n++
		}
	}
	return n
}

// TestSetSharedOneWrite: a final state set with SetShared costs one ref
// write per ref; the hour's first writer also makes the shared commit,
// whose sha every writer knows without a request. It replaces a running
// state (forced), creates a missing ref, and reads back as the status.
func TestSetSharedOneWrite(t *testing.T) {
	tests := []struct {
		name     string
		existing string // "": no ref; else the state the ref holds first
		fault    githubsim.FaultKind
		writes   int // accepted writes (a lost answer's repeat lands again); -1: each of the client's attempts
	}{
		{"over a running state", "running", "", 1},
		{"missing ref", "", "", 1},
		{"lost answer on the update", "running", githubsim.FaultStatus502, 2},
		{"reset on the create", "", githubsim.FaultReset, 1},
		{"every answer lost: read back", "running", "every", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, sim, clk := newStore(t)
			ctx := ctxT(t)
			// the hour's shared commit exists already: another job set it
			_, err := st.SetShared(ctx, "refs/mention-runner/test/first", "done")
			require.NoError(t, err)
			if tc.existing != "" {
				m, err := st.NewMark(ctx, tc.existing, "run 1", "")
				require.NoError(t, err)
				_, created, err := st.Create(ctx, ref, m)
				require.NoError(t, err)
				require.True(t, created)
			}
			if tc.fault == "every" {
				sim.AddFault(githubsim.Fault{Method: "PATCH", Path: "/repos/*/*/git/refs/*", Kind: githubsim.FaultStatus502, Rate: 1, AfterApply: true})
			} else if tc.fault != "" {
				method, path := "PATCH", "/repos/*/*/git/refs/*"
				if tc.existing == "" {
					method, path = "POST", "/repos/*/*/git/refs"
				}
				sim.AddFault(githubsim.Fault{Method: method, Path: path, Kind: tc.fault, OnCall: 1, AfterApply: true, Delay: 10 * time.Millisecond})
			}
			clk.Advance(10 * time.Minute) // the same hour
			before := len(sim.Requests())
			m, err := st.SetShared(ctx, ref, "done")
			require.NoError(t, err)
			if tc.writes >= 0 {
				assert.Equal(t, tc.writes, writesBy(sim, before), "ref writes only, no commit")
			}
			assert.Equal(t, clk.Now().Truncate(time.Hour), m.At)

			fresh, err := refstate.New(st.Client, "ops/control", clk.Now)
			require.NoError(t, err)
			got, err := fresh.Read(ctx, ref)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, "done", got.Status)
			assert.Equal(t, m.Commit, got.Commit)
			assert.Empty(t, got.Holder)
		})
	}
}

// TestSetSharedNewHour: the first writer of an hour makes the commit (one
// write more); a state set then dates from the hour's start, which the
// sweep reads as its age.
func TestSetSharedNewHour(t *testing.T) {
	st, sim, clk := newStore(t)
	ctx := ctxT(t)
	a, err := st.SetShared(ctx, "refs/mention-runner/test/a", "done")
	require.NoError(t, err)
	clk.Advance(time.Hour)
	before := len(sim.Requests())
	b, err := st.SetShared(ctx, "refs/mention-runner/test/b", "done")
	require.NoError(t, err)
	assert.NotEqual(t, a.Commit, b.Commit)
	assert.Equal(t, 2, writesBy(sim, before), "the hour's commit, then the ref")

	clk.Advance(8 * 24 * time.Hour)
	res, err := st.Sweep(ctx, refstate.SweepOptions{Prefix: "refs/mention-runner/test/", MaxAge: 7 * 24 * time.Hour})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"refs/mention-runner/test/a", "refs/mention-runner/test/b"}, res.Deleted)
}

// TestSetSharedConcurrentFirstOfHour: writers setting final states at
// once in a new hour all meet the missing shared commit; each makes it
// (the same content: one object) and every ref ends at it.
func TestSetSharedConcurrentFirstOfHour(t *testing.T) {
	st, sim, _ := newStore(t)
	ctx := ctxT(t)
	const n = 8
	shas := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m, err := st.SetShared(ctx, fmt.Sprintf("refs/mention-runner/test/c%d", i), "done")
			assert.NoError(t, err)
			shas[i] = m.Commit
		})
	}
	wg.Wait()
	for i := range n {
		assert.Equal(t, shas[0], shas[i])
		got, err := st.Read(ctx, fmt.Sprintf("refs/mention-runner/test/c%d", i))
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, "done", got.Status)
		assert.Equal(t, shas[0], got.Commit)
	}
	commits := 0
	for _, r := range sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/git/commits") {
			commits++
		}
	}
	assert.LessOrEqual(t, commits, n, "at most one commit request a writer")
}

// TestEnsureSharedThenOneRequest: EnsureShared reads the hour's shared
// commit and makes it when missing, once however many callers ask at
// once; a SetShared after it is the ref update alone, and a store that
// knows the commit asks nothing.
func TestEnsureSharedThenOneRequest(t *testing.T) {
	st, sim, _ := newStore(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() { assert.NoError(t, st.EnsureShared(ctx, "dispatched")) })
	}
	wg.Wait()
	var gets, posts int
	for _, r := range sim.Requests() {
		switch {
		case r.Method == "GET" && strings.Contains(r.Path, "/git/commits/"):
			gets++
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/git/commits"):
			posts++
		}
	}
	assert.Equal(t, 1, gets, "one read")
	assert.Equal(t, 1, posts, "one commit")

	sim.ResetRequests()
	require.NoError(t, st.EnsureShared(ctx, "dispatched"))
	assert.Empty(t, sim.Requests(), "known: no request")
	m, err := st.NewMark(ctx, "claimed", "me", "")
	require.NoError(t, err)
	_, created, err := st.Create(ctx, ref, m)
	require.NoError(t, err)
	require.True(t, created)
	sim.ResetRequests()
	_, err = st.SetShared(ctx, ref, "dispatched")
	require.NoError(t, err)
	require.Len(t, sim.Requests(), 1, "the mark over a claim: the ref update alone")
	assert.Equal(t, "PATCH", sim.Requests()[0].Method)

	fresh, err := refstate.New(st.Client, "ops/control", st.Now)
	require.NoError(t, err)
	sim.ResetRequests()
	require.NoError(t, fresh.EnsureShared(ctx, "dispatched"))
	require.Len(t, sim.Requests(), 1, "another process: one read, the commit exists")
	assert.Equal(t, "GET", sim.Requests()[0].Method)
}
