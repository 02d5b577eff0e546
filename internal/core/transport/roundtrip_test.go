package transport

import (
	"fmt"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundTrip: encode → shuffle → duplicate some → assemble == input.
func TestRoundTrip(t *testing.T) {
	sizes := []int{2, 5, 8, 9, 10, 1000, 47_900, 48_000, 48_001, 64_000, 100_001, 500_000, 1 << 20}
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := object(uint64(n), n)
			reqs := mustEncode(t, ctx)
			for _, r := range reqs {
				assert.Less(t, bodyLen(t, r), contract.DispatchBodyBytes)
			}
			for seed := range uint64(4) {
				got, err := assemble(Options{}, shuffleDup(reqs, seed))
				require.NoError(t, err, "seed %d", seed)
				require.Equal(t, ctx, got, "seed %d", seed)
			}
		})
	}
}
