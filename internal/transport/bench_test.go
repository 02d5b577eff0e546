package transport

import "testing"

func BenchmarkEncodeAssemble10MiB(b *testing.B) {
	ctx := object(10, 10<<20)
	opt := Options{MaxContextBytes: 16 << 20}
	b.SetBytes(int64(len(ctx)))
	b.ReportAllocs()
	for b.Loop() {
		reqs, err := Encode(testJob, ctx, testTime)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := assemble(opt, reqs); err != nil {
			b.Fatal(err)
		}
	}
}
