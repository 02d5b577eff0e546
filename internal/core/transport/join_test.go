package transport

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pieces are decoded onto one buffer as they come in order and copied on
// when they came early; in every order, with repeats at every stage, the
// context comes out whole and repeats are still compared with what they
// repeat.
func TestAssemblerJoinsInAnyOrder(t *testing.T) {
	ctx := object(9, 200_000)
	reqs := mustEncode(t, ctx)
	require.Equal(t, 5, len(reqs))
	cases := []struct {
		name  string
		order []int
	}{
		{"in order", []int{0, 1, 2, 3, 4}},
		{"reversed", []int{4, 3, 2, 1, 0}},
		{"pairs swapped", []int{1, 0, 3, 2, 4}},
		{"last first", []int{4, 0, 1, 2, 3}},
		{"first last", []int{1, 2, 3, 4, 0}},
		{"repeats", []int{0, 0, 2, 1, 2, 1, 0, 4, 4, 3, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := NewAssembler(Options{})
			for _, i := range c.order {
				_, err := a.Add(reqs[i].EventType, reqs[i].ClientPayload)
				require.NoError(t, err, "shard %d", i)
			}
			got, err := a.Context()
			require.NoError(t, err)
			assert.Equal(t, ctx, got)
			// A changed repeat of any shard, joined or not, is refused.
			for i := range reqs {
				b := NewAssembler(Options{})
				for _, j := range c.order {
					_, err := b.Add(reqs[j].EventType, reqs[j].ClientPayload)
					require.NoError(t, err)
				}
				changed := with(event{reqs[i].EventType, reqs[i].ClientPayload}, func(p *Payload) {
					p.ContextB64 = "QUJD" + p.ContextB64[4:]
				})
				_, err = b.Add(changed.eventType, changed.p)
				assert.True(t, IsKind(err, KindConflictingDuplicate), "shard %d: %v", i, err)
			}
		})
	}
}

// The buffer is sized from the first piece; a job whose later pieces are
// longer outgrows it, and the joined pieces move with it: repeats of them
// still compare, and the context is whole.
func TestAssemblerOutgrowsFirstPiece(t *testing.T) {
	ctx := object(11, 30_000)
	b64 := base64.StdEncoding.EncodeToString(ctx)
	cuts := []int{0, 4, 8, 2000, 20_000, len(b64)}
	shard := func(i int, s string) (string, Payload) {
		return contract.EventAgentShard, Payload{JobID: testJob, Shard: &Shard{Index: i, Total: len(cuts) - 1}, ContextB64: s, Timestamp: "2025-11-22T05:09:00Z"}
	}
	a := NewAssembler(Options{})
	for i := 0; i+1 < len(cuts); i++ {
		_, err := a.Add(shard(i, b64[cuts[i]:cuts[i+1]]))
		require.NoError(t, err)
		_, err = a.Add(shard(0, b64[:4]))
		require.NoError(t, err, "repeat of shard 0 after shard %d", i)
	}
	_, err := a.Add(shard(1, b64[4:8]))
	require.NoError(t, err)
	got, err := a.Context()
	require.NoError(t, err)
	assert.Equal(t, ctx, got)
	_, err = a.Add(shard(1, "QUJD"))
	assert.True(t, IsKind(err, KindConflictingDuplicate), "%v", err)
}

// ParseLine keeps no slice of its line: runner decode hands it lines in a
// buffer that the next line overwrites.
func TestParseLineKeepsNoSliceOfTheLine(t *testing.T) {
	lines := []string{
		`{"event_type":"agent_small","client_payload":{"jobid":"` + testJob + `","context_b64":"e30=","timestamp":"2025-11-22T05:09:00Z"}}`,
		`{"action":"agent_shard","client_payload":{"jobid":"` + testJob + `","shard":{"index":1,"total":3},"context_b64":"` + strings.Repeat("QUJD", 15_000) + `","timestamp":"2025-11-22T05:09:00+01:00"},"repository":{"full_name":"o/r"}}`,
		// Escaped strings take encoding/json's path.
		`{"event_type":"agent_\u0073mall","client_payload":{"jobid":"` + testJob + `","context_b64":"e30\u003d","timestamp":"2025-11-22T05:09:00\u005a"}}`,
	}
	for _, l := range lines {
		line := []byte(l)
		et, p, err := ParseLine(line)
		require.NoError(t, err)
		want := Request{EventType: strings.Clone(et), ClientPayload: Payload{JobID: strings.Clone(p.JobID), ContextB64: strings.Clone(p.ContextB64), Timestamp: strings.Clone(p.Timestamp)}}
		if p.Shard != nil {
			s := *p.Shard
			want.ClientPayload.Shard = &s
		}
		copy(line, bytes.Repeat([]byte("x"), len(line)))
		assert.Equal(t, want, Request{EventType: et, ClientPayload: p})
	}
}

// Were join ever to leave a piece out, Context refuses instead of handing
// out a context with a gap.
func TestContextRefusesAnUnjoinedPiece(t *testing.T) {
	reqs := mustEncode(t, object(12, 200_000))
	for _, broken := range []func(a *Assembler){
		func(a *Assembler) { a.next-- },
		func(a *Assembler) { a.joined = a.joined[:len(a.joined)-1] },
	} {
		a := NewAssembler(Options{})
		for _, r := range reqs {
			_, err := a.Add(r.EventType, r.ClientPayload)
			require.NoError(t, err)
		}
		broken(a)
		got, err := a.Context()
		assert.Nil(t, got)
		assert.True(t, IsKind(err, KindIncomplete), "%v", err)
	}
}
