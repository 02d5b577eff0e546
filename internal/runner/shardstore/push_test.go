package shardstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// What a job's refs cost in writes: through pushes, a piece is one (blob,
// tree, commit and ref together), the lock one, and the job's deletion one.
func TestWritesPerStep(t *testing.T) {
	for _, tc := range []struct {
		push             bool
		put, lock, clear int
	}{
		{false, 3, 2, 3},
		{true, 1, 1, 1},
	} {
		t.Run(map[bool]string{false: "rest", true: "push"}[tc.push], func(t *testing.T) {
			f := newFixtureMode(t, tc.push)
			ctx := context.Background()
			writes := func() int { return len(f.sim.ContentWrites()["mr-bot"]) }
			var last *Stored
			for i, p := range pieces(t, job, 2) {
				before := writes()
				st, err := f.store.Put(ctx, p)
				require.NoError(t, err)
				assert.Equal(t, tc.put, writes()-before, "piece %d", i)
				last = st
			}
			j, err := f.store.List(ctx, job)
			require.NoError(t, err)
			before := writes()
			lr, err := f.store.Lock(ctx, j, Holder{JobID: job, RunID: "7"}, last.Tree)
			require.NoError(t, err)
			require.True(t, lr.Won)
			assert.Equal(t, tc.lock, writes()-before, "lock")
			before = writes()
			require.NoError(t, f.store.DeleteJob(ctx, job))
			assert.Equal(t, tc.clear, writes()-before, "delete the job's refs")
			j, err = f.store.List(ctx, job)
			require.NoError(t, err)
			assert.Empty(t, j.Shards)
			assert.Empty(t, j.Lock)
		})
	}
}

// A push that lands but whose answer is lost (a 502, a reset, a hang) is
// found by reading the ref back, with no retry of the push: the piece is
// stored once and read back whole, and the lock is this run's.
func TestPushLostAnswers(t *testing.T) {
	kinds := []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang}
	for _, step := range []string{"piece", "replacement", "lock", "delete"} {
		for _, kind := range kinds {
			t.Run(step+" "+string(kind), func(t *testing.T) {
				f := newFixtureMode(t, true)
				ctx := context.Background()
				fault := githubsim.Fault{Method: "POST", Path: "/" + control + ".git/git-receive-pack", Kind: kind, OnCall: 1, AfterApply: true, Delay: 10 * time.Millisecond}
				ps := pieces(t, job, 1)
				if step == "replacement" {
					_, err := f.store.Put(ctx, ps[0])
					require.NoError(t, err)
					f.clock.Advance(time.Minute)
					ps[0].Timestamp = "2025-03-01T12:00:30Z"
				}
				if step == "piece" || step == "replacement" {
					f.sim.AddFault(fault)
				}
				st, err := f.store.Put(ctx, ps[0])
				require.NoError(t, err)
				assert.False(t, st.Duplicate, "stored by this run")
				assert.Equal(t, step == "replacement", st.Replaced)
				sha, err := f.store.refCommit(ctx, contract.ShardRef(job, 0))
				require.NoError(t, err)
				assert.Equal(t, st.Commit, sha)
				assert.Equal(t, ps[0], readPiece(t, f, sha))

				if step == "lock" {
					f.sim.AddFault(fault)
				}
				j, err := f.store.List(ctx, job)
				require.NoError(t, err)
				lr, err := f.store.Lock(ctx, j, Holder{JobID: job, RunID: "7"}, st.Tree)
				require.NoError(t, err)
				assert.True(t, lr.Won)
				assert.False(t, lr.Reentered)
				other, err := f.store.Lock(ctx, &Job{ID: job}, Holder{JobID: job, RunID: "8"}, st.Tree)
				require.NoError(t, err)
				assert.False(t, other.Won, "one lock")
				assert.Equal(t, "7", other.Holder.RunID)

				if step == "delete" {
					f.sim.AddFault(fault)
				}
				err = f.store.DeleteJob(ctx, job)
				if step == "delete" {
					require.Error(t, err, "the answer was lost")
				}
				j, err = f.store.List(ctx, job)
				require.NoError(t, err)
				assert.Empty(t, j.Shards, "deleted before the answer was lost")
				assert.Empty(t, j.Lock)
			})
		}
	}
}

// A delete from a commit the ref no longer holds leaves the ref alone:
// a piece stored after the listing is not lost.
func TestDeleteJobIsCompareAndSwap(t *testing.T) {
	f := newFixtureMode(t, true)
	ctx := context.Background()
	p := pieces(t, job, 1)[0]
	_, err := f.store.Put(ctx, p)
	require.NoError(t, err)
	stale, err := f.store.listRefs(ctx, contract.JobRefs(job))
	require.NoError(t, err)
	f.clock.Advance(time.Minute)
	p.Timestamp = "2025-03-01T12:00:30Z" // a newer dispatch of the job
	st, err := f.store.Put(ctx, p)
	require.NoError(t, err)
	require.True(t, st.Replaced)
	// delete from the stale listing, as a publish that listed first would
	require.NoError(t, f.store.deleteListed(ctx, stale))
	sha, err := f.store.refCommit(ctx, contract.ShardRef(job, 0))
	require.NoError(t, err)
	assert.Equal(t, st.Commit, sha, "the newer piece stays; the sweep takes it later")
}
