package transport

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodeBoundary builds contexts whose agent_small body would be exactly
// 63,999 / 64,000 / 64,001 bytes. Base64 grows in steps of 4, so the
// timestamp's fraction digits are varied to reach each exact length.
func TestEncodeBoundary(t *testing.T) {
	for _, target := range []int{contract.DispatchBodyBytes - 1, contract.DispatchBodyBytes, contract.DispatchBodyBytes + 1} {
		t.Run(fmt.Sprint(target), func(t *testing.T) {
			ts, n := fitTimestamp(t, target)
			ctx := object(uint64(target), n)
			reqs, err := Encode(testJob, ctx, ts)
			require.NoError(t, err)

			whole := Request{EventType: contract.EventAgentSmall, ClientPayload: Payload{
				JobID: testJob, ContextB64: base64.StdEncoding.EncodeToString(ctx), Timestamp: ts.UTC().Format(time.RFC3339Nano)}}
			require.Equal(t, target, bodyLen(t, whole), "test setup: small body length")

			if target < contract.DispatchBodyBytes {
				require.Len(t, reqs, 1)
				assert.Equal(t, contract.EventAgentSmall, reqs[0].EventType)
				assert.Equal(t, whole, reqs[0])
			} else {
				require.Len(t, reqs, 2)
				for i, r := range reqs {
					assert.Equal(t, contract.EventAgentShard, r.EventType)
					assert.Equal(t, &Shard{Index: i, Total: 2}, r.ClientPayload.Shard)
					assert.Less(t, bodyLen(t, r), contract.DispatchBodyBytes)
				}
			}
			got, err := assemble(Options{}, reqs)
			require.NoError(t, err)
			assert.Equal(t, ctx, got)
		})
	}
}

// fitTimestamp finds a timestamp with which a context of n bytes (n a
// multiple of 3, so no padding) makes the small body exactly target bytes.
func fitTimestamp(t *testing.T, target int) (time.Time, int) {
	for digits := 0; digits <= 9; digits++ {
		frac := 0
		for range digits {
			frac = frac*10 + 1
		}
		for range 9 - digits {
			frac *= 10
		}
		ts := testTime.Add(time.Duration(frac))
		h := bodyLen(t, Request{EventType: contract.EventAgentSmall, ClientPayload: Payload{JobID: testJob, Timestamp: ts.Format(time.RFC3339Nano)}})
		if (target-h)%4 == 0 {
			return ts, (target - h) / 4 * 3
		}
	}
	t.Fatalf("no timestamp reaches body length %d", target)
	return time.Time{}, 0
}

func TestEncodeShardsArePackedAndUnderLimit(t *testing.T) {
	for _, n := range []int{70_000, 640_000} {
		ctx := object(uint64(n), n)
		reqs := mustEncode(t, ctx)
		b64 := base64.StdEncoding.EncodeToString(ctx)
		var joined strings.Builder
		for i, r := range reqs {
			l := bodyLen(t, r)
			assert.Less(t, l, contract.DispatchBodyBytes, "shard %d", i)
			if i < len(reqs)-1 {
				assert.GreaterOrEqual(t, l, contract.DispatchBodyBytes-4, "shard %d should be full", i)
			}
			assert.Zero(t, len(r.ClientPayload.ContextB64)%4, "shard %d cut at a multiple of 4", i)
			assert.Equal(t, Shard{Index: i, Total: len(reqs)}, *r.ClientPayload.Shard)
			assert.Equal(t, testJob, r.ClientPayload.JobID)
			assert.Equal(t, "2025-11-22T05:09:00Z", r.ClientPayload.Timestamp)
			joined.WriteString(r.ClientPayload.ContextB64)
		}
		assert.Equal(t, b64, joined.String())
	}
}

func TestEncodeNormalisesJobIDAndTime(t *testing.T) {
	reqs, err := Encode(strings.ToUpper(testJob), []byte(`{}`), testTime.In(time.FixedZone("X", 3600)))
	require.NoError(t, err)
	require.Len(t, reqs, 1)
	assert.Equal(t, Request{EventType: contract.EventAgentSmall, ClientPayload: Payload{
		JobID: testJob, ContextB64: "e30=", Timestamp: "2025-11-22T05:09:00Z"}}, reqs[0])
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name, jobID, ctx string
		ts               time.Time
		kind             ErrorKind
		msg              string
	}{
		{"bad jobid", "not-a-uuid", `{}`, testTime, KindBadPayload, "not a UUID"},
		{"empty jobid", "", `{}`, testTime, KindBadPayload, "not a UUID"},
		{"empty context", testJob, ``, testTime, KindNotJSONObject, "empty"},
		{"array", testJob, `[1,2]`, testTime, KindNotJSONObject, "not an array"},
		{"string", testJob, `"x"`, testTime, KindNotJSONObject, "not a string"},
		{"number", testJob, `12`, testTime, KindNotJSONObject, "not a number"},
		{"null", testJob, `null`, testTime, KindNotJSONObject, "not null"},
		{"two objects", testJob, `{}{}`, testTime, KindNotJSONObject, "data after"},
		{"broken", testJob, `{"a":`, testTime, KindNotJSONObject, "not valid JSON"},
		{"year 10000", testJob, `{}`, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), KindBadPayload, "RFC 3339"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reqs, err := Encode(c.jobID, []byte(c.ctx), c.ts)
			assert.Nil(t, reqs)
			require.Error(t, err)
			assert.True(t, IsKind(err, c.kind), "kind of %v", err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}
