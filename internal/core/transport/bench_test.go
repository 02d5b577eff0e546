package transport

import (
	"encoding/base64"
	"encoding/json"
	"io"
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

// BenchmarkWriteCompact10MiB is dispatcher encode's work: compact a 10 MiB
// context in place and write its request bodies one by one.
func BenchmarkWriteCompact10MiB(b *testing.B) {
	ctx := object(10, 10<<20)
	in := make([]byte, len(ctx))
	b.SetBytes(int64(len(ctx)))
	b.ReportAllocs()
	for b.Loop() {
		copy(in, ctx)
		if _, err := WriteCompact(io.Discard, testJob, in, testTime); err != nil {
			b.Fatal(err)
		}
	}
}
