package mention

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFindLinearWork counts the bytes the scan examines (not time) for
// realistic and adversarial bodies at two sizes 16× apart: the work per input
// byte must stay under a small constant and must not grow with the size.
func TestFindLinearWork(t *testing.T) {
	const perByte = 8
	for _, bb := range bodies {
		t.Run(bb.name, func(t *testing.T) {
			var ratios []float64
			for _, n := range []int{16 << 10, 256 << 10} {
				body := bb.make(n)
				_, steps := find(body, "bot")
				assert.LessOrEqual(t, steps, perByte*len(body)+64, "size %d", n)
				ratios = append(ratios, float64(steps)/float64(len(body)))
			}
			assert.LessOrEqual(t, ratios[1], ratios[0]+0.1, "steps/byte grew from 16 KiB to 256 KiB")
		})
	}
}
