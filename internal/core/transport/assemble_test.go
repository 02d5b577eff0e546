package transport

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const otherJob = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

type event struct {
	eventType string
	p         Payload
}

func events(reqs []Request) []event {
	out := make([]event, len(reqs))
	for i, r := range reqs {
		out[i] = event{r.EventType, r.ClientPayload}
	}
	return out
}

func smallEvent(ctx string) event {
	return event{contract.EventAgentSmall, Payload{JobID: testJob, ContextB64: base64.StdEncoding.EncodeToString([]byte(ctx)), Timestamp: "2025-11-22T05:09:00Z"}}
}

// with returns a copy of e changed by f; shard pointers are not shared.
func with(e event, f func(p *Payload)) event {
	if e.p.Shard != nil {
		s := *e.p.Shard
		e.p.Shard = &s
	}
	f(&e.p)
	return e
}

func TestAssembleErrors(t *testing.T) {
	shards := events(mustEncode(t, object(7, 200_000)))
	require.Len(t, shards, 5)
	s0, s1, s2, s3, s4 := shards[0], shards[1], shards[2], shards[3], shards[4]
	all := func(extra ...event) []event { return append(append([]event(nil), shards...), extra...) }

	cases := []struct {
		name   string
		opt    Options
		events []event
		failAt int // index of the event whose Add fails; -1: Context fails
		kind   ErrorKind
		msg    []string
	}{
		{"jobid mismatch", Options{}, []event{s0, with(s1, func(p *Payload) { p.JobID = otherJob })}, 1, KindJobIDMismatch,
			[]string{testJob, otherJob, "shard 1"}},
		{"total mismatch", Options{}, []event{s0, with(s1, func(p *Payload) { p.Shard.Total = 6 })}, 1, KindTotalMismatch,
			[]string{"total 6", "said 5", "shard 1"}},
		{"index equals total", Options{}, []event{with(s0, func(p *Payload) { p.Shard.Index = 5 })}, 0, KindIndexOutOfRange,
			[]string{"index 5", "0..4"}},
		{"negative index", Options{}, []event{with(s0, func(p *Payload) { p.Shard.Index = -1 })}, 0, KindIndexOutOfRange,
			[]string{"index -1"}},
		{"zero total", Options{}, []event{with(s0, func(p *Payload) { p.Shard.Total = 0 })}, 0, KindIndexOutOfRange,
			[]string{"total 0"}},
		{"conflicting duplicate", Options{}, []event{s0, s1, with(s1, func(p *Payload) { p.ContextB64 = flip(p.ContextB64) })}, 2, KindConflictingDuplicate,
			[]string{"shard 1", testJob, "different content"}},
		{"conflicting small", Options{}, []event{smallEvent(`{}`), smallEvent(`{"a":1}`)}, 1, KindConflictingDuplicate,
			[]string{"agent_small"}},
		{"base64 alphabet", Options{}, []event{with(s0, func(p *Payload) { p.ContextB64 = "@@@@" + p.ContextB64[4:] })}, 0, KindInvalidBase64,
			[]string{"not valid standard padded base64", "shard 0"}},
		{"base64 url alphabet", Options{}, []event{with(smallEvent(`{"a":"??>"}`), func(p *Payload) {
			p.ContextB64 = strings.NewReplacer("+", "-", "/", "_").Replace(p.ContextB64)
		})}, 0, KindInvalidBase64, nil},
		{"base64 length", Options{}, []event{with(s0, func(p *Payload) { p.ContextB64 = p.ContextB64[:7] })}, 0, KindInvalidBase64,
			[]string{"multiple of 4"}},
		{"base64 line break", Options{}, []event{with(s0, func(p *Payload) { p.ContextB64 = p.ContextB64[:4] + "\n" + p.ContextB64[5:8] })}, 0, KindInvalidBase64,
			[]string{"line break"}},
		{"base64 non-canonical", Options{}, []event{with(smallEvent(`{}`), func(p *Payload) { p.ContextB64 = "e31=" })}, 0, KindInvalidBase64, nil},
		{"padding in middle shard", Options{}, []event{with(s2, func(p *Payload) { p.ContextB64 = "e30=" })}, 0, KindInvalidBase64,
			[]string{"padding in shard 2", "not the last"}},
		{"empty shard", Options{}, []event{with(s2, func(p *Payload) { p.ContextB64 = "" })}, 0, KindInvalidBase64,
			[]string{"empty"}},
		{"small array", Options{}, []event{smallEvent(`[1,2]`)}, -1, KindNotJSONObject, []string{"array", testJob}},
		{"small trailing data", Options{}, []event{smallEvent(`{"a":1} {}`)}, -1, KindNotJSONObject, []string{"after the object"}},
		{"small truncated", Options{}, []event{smallEvent(`{"a":`)}, -1, KindNotJSONObject, nil},
		{"small empty", Options{}, []event{with(smallEvent(``), func(p *Payload) { p.ContextB64 = "" })}, 0, KindNotJSONObject, []string{"empty"}},
		{"shards not an object", Options{}, events(shardReqs(t, "["+strings.Repeat(`"x",`, 30_000)+`"x"]`)), -1, KindNotJSONObject, nil},
		{"too large", Options{MaxContextBytes: 100_000, MaxShards: 10}, shards, 2, KindTooLarge, []string{"cap of 100000"}},
		{"too large small", Options{MaxContextBytes: 4}, []event{smallEvent(`{"a":1}`)}, 0, KindTooLarge, nil},
		{"oversized piece", Options{}, []event{with(s0, func(p *Payload) { p.ContextB64 = strings.Repeat("AAAA", 16000) })}, 0, KindTooLarge,
			[]string{"64000"}},
		{"too many shards", Options{MaxShards: 4}, shards, 0, KindTooManyShards, []string{"5 shards", "at most 4"}},
		{"shard limit derived from cap", Options{MaxContextBytes: 100_000}, shards, 0, KindTooManyShards, []string{"at most 4"}},
		{"attacker total", Options{}, []event{with(s0, func(p *Payload) { p.Shard.Total = 1 << 40 })}, 0, KindTooManyShards, []string{"at most 188"}},
		{"incomplete", Options{}, []event{s0, s3}, -1, KindIncomplete, []string{"have 2 of 5", "missing 1, 2, 4"}},
		{"nothing", Options{}, nil, -1, KindIncomplete, []string{"no events"}},
		{"unknown event type", Options{}, []event{{"agent_big", s0.p}}, 0, KindBadPayload, []string{`"agent_big"`}},
		{"uppercase jobid", Options{}, []event{with(s0, func(p *Payload) { p.JobID = strings.ToUpper(testJob) })}, 0, KindBadPayload,
			[]string{"canonical UUID"}},
		{"missing jobid", Options{}, []event{with(s0, func(p *Payload) { p.JobID = "" })}, 0, KindBadPayload, nil},
		{"missing timestamp", Options{}, []event{with(s0, func(p *Payload) { p.Timestamp = "" })}, 0, KindBadPayload, []string{"timestamp is missing"}},
		{"bad timestamp", Options{}, []event{with(s0, func(p *Payload) { p.Timestamp = "yesterday" })}, 0, KindBadPayload, []string{`"yesterday"`}},
		{"small after shards", Options{}, []event{s0, smallEvent(`{}`)}, 1, KindEventTypeMismatch, []string{"agent_small", "agent_shard"}},
		{"shard after small", Options{}, []event{smallEvent(`{}`), s1}, 1, KindEventTypeMismatch, nil},
		{"small with shard field", Options{}, []event{{contract.EventAgentSmall, s0.p}}, 0, KindEventTypeMismatch, []string{"shard field"}},
		{"shard without shard field", Options{}, []event{{contract.EventAgentShard, smallEvent(`{}`).p}}, 0, KindEventTypeMismatch, []string{"no shard field"}},
		{"error is sticky", Options{}, all(with(s4, func(p *Payload) { p.JobID = otherJob })), 5, KindJobIDMismatch, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := NewAssembler(c.opt)
			var err error
			for i, e := range c.events {
				_, err = a.Add(e.eventType, e.p)
				if i == c.failAt {
					require.Error(t, err, "event %d", i)
					break
				}
				require.NoError(t, err, "event %d", i)
			}
			ctx, cerr := a.Context()
			assert.Nil(t, ctx, "no context after an error")
			require.Error(t, cerr)
			if c.failAt >= 0 {
				assert.Same(t, err, cerr, "the first error is sticky")
				_, again := a.Add(s0.eventType, s0.p)
				assert.Same(t, err, again)
			}
			assert.True(t, IsKind(cerr, c.kind), "want %s, got %v", c.kind, cerr)
			for _, m := range c.msg {
				assert.Contains(t, cerr.Error(), m)
			}
		})
	}
}

func shardReqs(t *testing.T, ctx string) []Request {
	t.Helper()
	// Encode refuses non-objects, so cut such a context the same way by hand.
	reqs := mustEncode(t, []byte(`{"a":"`+strings.Repeat("x", len(ctx)-8)+`"}`))
	b64 := base64.StdEncoding.EncodeToString([]byte(ctx))
	off := 0
	for i := range reqs {
		n := len(reqs[i].ClientPayload.ContextB64)
		reqs[i].ClientPayload.ContextB64 = b64[off : off+n]
		off += n
	}
	require.Equal(t, len(b64), off)
	return reqs
}

// flip changes the first base64 character to another that keeps the piece valid.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestAssembleProgressAndDuplicates(t *testing.T) {
	ctx := object(9, 200_000)
	reqs := mustEncode(t, ctx)
	require.Len(t, reqs, 5)
	a := NewAssembler(Options{})
	steps := []struct {
		index   int
		have    int
		missing []int
	}{
		{3, 1, []int{0, 1, 2, 4}},
		{3, 1, []int{0, 1, 2, 4}}, // identical duplicate: harmless
		{0, 2, []int{1, 2, 4}},
		{4, 3, []int{1, 2}},
		{1, 4, []int{2}},
		{2, 5, nil},
		{2, 5, nil},
	}
	for _, s := range steps {
		pr, err := a.Add(reqs[s.index].EventType, reqs[s.index].ClientPayload)
		require.NoError(t, err)
		assert.Equal(t, Progress{JobID: testJob, Have: s.have, Total: 5, Done: s.have == 5, Missing: s.missing}, pr)
		if !pr.Done {
			_, err := a.Context()
			assert.True(t, IsKind(err, KindIncomplete))
		}
	}
	got, err := a.Context()
	require.NoError(t, err)
	assert.Equal(t, ctx, got)
	// A duplicate after completion is still checked, and still harmless.
	_, err = a.Add(reqs[1].EventType, reqs[1].ClientPayload)
	require.NoError(t, err)
	again, err := a.Context()
	require.NoError(t, err)
	assert.Equal(t, ctx, again)
}

func TestAssembleSmall(t *testing.T) {
	a := NewAssembler(Options{})
	e := smallEvent(`{"issue":{"number":1}}`)
	pr, err := a.Add(e.eventType, e.p)
	require.NoError(t, err)
	assert.Equal(t, Progress{JobID: testJob, Have: 1, Total: 1, Done: true}, pr)
	_, err = a.Add(e.eventType, e.p)
	require.NoError(t, err)
	got, err := a.Context()
	require.NoError(t, err)
	assert.Equal(t, `{"issue":{"number":1}}`, string(got))
}

func TestOptionsDefaults(t *testing.T) {
	cases := []struct {
		in, want Options
	}{
		{Options{}, Options{MaxContextBytes: DefaultMaxContextBytes, MaxShards: 188}},
		{Options{MaxContextBytes: -1, MaxShards: -1}, Options{MaxContextBytes: DefaultMaxContextBytes, MaxShards: 188}},
		{Options{MaxContextBytes: 1000}, Options{MaxContextBytes: 1000, MaxShards: 2}},
		{Options{MaxContextBytes: 1000, MaxShards: 7}, Options{MaxContextBytes: 1000, MaxShards: 7}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.in.withDefaults())
	}
	// The derived limit must admit what Encode produces for a context at the cap.
	ends, err := shard(testJob, "2025-11-22T05:09:00.123456789Z", (DefaultMaxContextBytes+2)/3*4)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(ends), Options{}.withDefaults().MaxShards)
}

func TestDecodedLen(t *testing.T) {
	for _, s := range []string{"", "e30=", "eyJhIjoxfQ==", "eyJhIjoxMX0="} {
		b, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		assert.Equal(t, len(b), decodedLen(s), s)
	}
}
