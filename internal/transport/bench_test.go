package transport

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

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

// BenchmarkFloorEncodeAssemble10MiB is the floor the round trip is measured
// against (make bench): what any transport must do at least — base64
// encode, base64 decode, and one encoding/json.Valid over the context.
func BenchmarkFloorEncodeAssemble10MiB(b *testing.B) {
	ctx := object(10, 10<<20)
	b.SetBytes(int64(len(ctx)))
	b.ReportAllocs()
	for b.Loop() {
		s := base64.StdEncoding.EncodeToString(ctx)
		out, err := base64.StdEncoding.DecodeString(s)
		if err != nil || !json.Valid(out) {
			b.Fatal("floor round trip failed")
		}
	}
}
