package transport

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const testJob = "0f8fad5b-d9cb-469f-a165-70867728950e"

var testTime = time.Date(2025, 11, 22, 5, 9, 0, 0, time.UTC)

// object returns a JSON object of exactly n bytes (n >= 2) with random
// letters, so its base64 has no long repeats.
func object(seed uint64, n int) []byte {
	if n < 8 {
		b := make([]byte, n)
		for i := range b {
			b[i] = ' '
		}
		b[0], b[n-1] = '{', '}'
		return b
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ." // 64: one per 6 bits
	b := make([]byte, n)
	copy(b, `{"a":"`)
	for i := 6; i < n-2; {
		for r := rng.Uint64(); r != 0 && i < n-2; r >>= 6 {
			b[i] = alphabet[r&63]
			i++
		}
	}
	copy(b[n-2:], `"}`)
	return b
}

func mustEncode(t testing.TB, ctx []byte) []Request {
	t.Helper()
	reqs, err := Encode(testJob, ctx, testTime)
	require.NoError(t, err)
	return reqs
}

func bodyLen(t testing.TB, r Request) int {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return len(b)
}

// assemble adds every request in order and returns the context or the first error.
func assemble(o Options, reqs []Request) ([]byte, error) {
	a := NewAssembler(o)
	for _, r := range reqs {
		if _, err := a.Add(r.EventType, r.ClientPayload); err != nil {
			return nil, err
		}
	}
	return a.Context()
}

// shuffleDup returns reqs in a seeded random order with some repeated.
func shuffleDup(reqs []Request, seed uint64) []Request {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := append([]Request(nil), reqs...)
	for i := range reqs {
		if rng.IntN(3) == 0 {
			out = append(out, reqs[i])
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
