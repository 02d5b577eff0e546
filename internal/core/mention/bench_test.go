package mention

import "testing"

// BenchmarkFind1MB reports MB/s for realistic and adversarial 1 MB bodies.
func BenchmarkFind1MB(b *testing.B) {
	for _, bb := range bodies {
		body := bb.make(1 << 20)
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Find(body, "bot")
			}
		})
	}
}
