package assemble

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

// TestStateSweepSampled: old job states are swept only by the runs that
// drew it (one in StateSweepOneIn, on Options.Rand) and have their job's
// whole context (beside the job's state); the others do not even list
// them.
func TestStateSweepSampled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		seed    uint64 // seeds whose first draw is 0 sweep (8; 1 does not)
		waiting bool   // the run is a shard's that waits for the others
		swept   bool
	}{
		{"drawn: swept", 8, false, true},
		{"not drawn: not listed", 1, false, false},
		{"drawn, but a shard run waiting for the others: not swept", 8, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			old := events(t, transport.JobID("IC_old"), contextFor("IC_old", 10))[0]
			require.NoError(t, h.run(t, old).err)
			h.clock.Advance(8 * 24 * time.Hour)
			ev := events(t, transport.JobID("IC_now"), contextFor("IC_now", 10))[0]
			if tc.waiting {
				ev = events(t, transport.JobID("IC_now"), contextFor("IC_now", 120_000))[0]
			}
			before := len(h.sim.Requests())
			o := h.run(t, ev, withSeed(tc.seed))
			require.NoError(t, o.err)
			listed := false
			for _, r := range h.sim.Requests()[before:] {
				listed = listed || strings.Contains(r.Path, "matching-refs/"+strings.TrimPrefix(contract.RunStateRefPrefix, "refs/"))
			}
			assert.Equal(t, tc.swept, listed, "the job states listed")
			oldState := contract.RunStateRef(transport.JobID("IC_old"))
			if tc.swept {
				require.NotNil(t, o.res.StateSweep)
				assert.Equal(t, []string{oldState}, o.res.StateSweep.Deleted)
				assert.NotContains(t, h.sim.Refs(control, contract.RunStateRefPrefix), oldState)
			} else {
				assert.Nil(t, o.res.StateSweep)
				assert.Contains(t, h.sim.Refs(control, contract.RunStateRefPrefix), oldState)
			}
			assert.Equal(t, !tc.waiting, o.res.Ready)
		})
	}
}

// TestDrawStateSweep: about one run in StateSweepOneIn sweeps.
func TestDrawStateSweep(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, seed))
		n := 0
		for range 20_000 {
			if drawStateSweep(rng) {
				n++
			}
		}
		assert.InDelta(t, 20_000/StateSweepOneIn, n, 100, "seed %d", seed)
	}
}
