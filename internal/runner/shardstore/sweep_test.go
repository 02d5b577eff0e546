package shardstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
)

// TestSweepPush: with Push a sweep deletes the stale refs of every old job
// in one push (the cap's number of pushes beyond it); without, one DELETE
// a ref. Fresh jobs and the caller's own are left.
func TestSweepPush(t *testing.T) {
	const old1, old2 = "2b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10", "4b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10"
	const fresh = "3b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10"
	for _, tc := range []struct {
		name       string
		push       bool
		maxUpdates int
		writes     int
	}{
		{"REST: a write a ref", false, 0, 5},
		{"push: one write", true, 0, 1},
		{"push: a cap of 2, ceil(5/2) pushes", true, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			put := func(jobID string, n int) {
				for _, p := range pieces(t, jobID, n) {
					_, err := f.store.Put(ctx, p)
					require.NoError(t, err)
				}
			}
			put(old1, 3)
			put(old2, 2)
			put(job, 1) // the caller's own: skipped even when stale
			f.clock.Advance(25 * time.Hour)
			put(fresh, 2)
			if tc.push {
				p, err := refpush.New(f.gh.Client(), f.sim.URL(), "tok")
				require.NoError(t, err)
				p.MaxUpdates = tc.maxUpdates
				f.store.Push = p
			}
			before := len(f.sim.ContentWrites()["mr-bot"])
			res, err := f.store.Sweep(ctx, SweepOptions{Skip: job})
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Len(t, res.Deleted, 5)
			assert.Equal(t, tc.writes, len(f.sim.ContentWrites()["mr-bot"])-before)
			assert.Empty(t, f.sim.Refs(control, contract.JobRefs(old1)))
			assert.Empty(t, f.sim.Refs(control, contract.JobRefs(old2)))
			assert.Len(t, f.sim.Refs(control, contract.JobRefs(fresh)), 2)
			assert.Len(t, f.sim.Refs(control, contract.JobRefs(job)), 1)
		})
	}
}
