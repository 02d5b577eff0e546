package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// FuzzAssemble feeds newline-separated lines through ParseLine and Add. It
// must never panic, and a context may come out only if an independent
// re-check of every accepted event agrees with it.
func FuzzAssemble(f *testing.F) {
	for _, s := range assembleSeeds {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, knob uint8) {
		opt := Options{}
		if knob&1 == 1 {
			opt = Options{MaxContextBytes: int(knob) * 4, MaxShards: int(knob%8) + 1}
		}
		a := NewAssembler(opt)
		var accepted []event
		failed := false
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			et, p, err := ParseLine(line)
			if err != nil {
				continue
			}
			if _, err := a.Add(et, p); err != nil {
				failed = true
				continue
			}
			accepted = append(accepted, event{et, p})
		}
		ctx, err := a.Context()
		if err != nil {
			if ctx != nil {
				t.Fatalf("context returned with error %v", err)
			}
			return
		}
		if failed {
			t.Fatalf("context returned although an Add failed")
		}
		if want, why := reference(accepted, opt.withDefaults()); !bytes.Equal(want, ctx) {
			t.Fatalf("assembler returned %q; reference check: %q (%s)", ctx, want, why)
		}
	})
}

// reference re-derives the context from accepted events the slow, obvious
// way, or returns nil and why not.
func reference(evs []event, opt Options) ([]byte, string) {
	if len(evs) == 0 {
		return nil, "no events"
	}
	first := evs[0]
	pieces := map[int]string{}
	total := 1
	if first.eventType == contract.EventAgentShard {
		total = first.p.Shard.Total
	}
	if total > opt.MaxShards {
		return nil, "too many shards"
	}
	for _, e := range evs {
		if e.eventType != first.eventType || e.p.JobID != first.p.JobID {
			return nil, "mixed events"
		}
		i := 0
		if e.eventType == contract.EventAgentShard {
			if e.p.Shard.Total != total {
				return nil, "total mismatch"
			}
			i = e.p.Shard.Index
		}
		if i < 0 || i >= total {
			return nil, "index out of range"
		}
		if prev, ok := pieces[i]; ok && prev != e.p.ContextB64 {
			return nil, "conflicting duplicate"
		}
		if strings.ContainsAny(e.p.ContextB64, "\r\n") || e.p.ContextB64 == "" {
			return nil, "bad piece"
		}
		pieces[i] = e.p.ContextB64
	}
	var all strings.Builder
	for i := range total {
		p, ok := pieces[i]
		if !ok {
			return nil, "incomplete"
		}
		all.WriteString(p)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(all.String())
	if err != nil {
		return nil, "whole is not base64"
	}
	if len(b) > opt.MaxContextBytes {
		return nil, "too large"
	}
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if !json.Valid(b) || len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, "not a JSON object"
	}
	return b, ""
}

var assembleSeeds = []string{
	`{"event_type":"agent_small","client_payload":{"jobid":"` + testJob + `","context_b64":"e30=","timestamp":"2025-11-22T05:09:00Z"}}`,
	`{"event_type":"agent_shard","client_payload":{"jobid":"` + testJob + `","shard":{"index":1,"total":2},"context_b64":"IjoxfQ==","timestamp":"2025-11-22T05:09:00Z"}}` + "\n" +
		`{"action":"agent_shard","client_payload":{"jobid":"` + testJob + `","shard":{"index":0,"total":2},"context_b64":"eyJh","timestamp":"2025-11-22T05:09:00Z"},"repository":{"full_name":"o/r"}}`,
	`{"event_type":"agent_shard","client_payload":{"jobid":"` + testJob + `","shard":{"index":0,"total":2},"context_b64":"e30=","timestamp":"2025-11-22T05:09:00Z"}}` + "\n" +
		`{"event_type":"agent_shard","client_payload":{"jobid":"` + testJob + `","shard":{"index":1,"total":2},"context_b64":"e30=","timestamp":"2025-11-22T05:09:00Z"}}`,
	`{"event_type":"agent_small","client_payload":{"jobid":"` + testJob + `","context_b64":"WzFd","timestamp":"2025-11-22T05:09:00+01:00"}}`,
}

// FuzzRoundTrip: any JSON object, optionally padded past the shard limit,
// survives encode → shuffle → duplicate → assemble byte for byte.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`{}`), uint32(0), uint64(1))
	f.Add([]byte(`{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`), uint32(70_000), uint64(2))
	f.Add([]byte(`[1]`), uint32(0), uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, pad uint32, seed uint64) {
		ctx := data
		if checkObject(ctx) != nil {
			var err error
			if ctx, err = json.Marshal(map[string]string{"v": string(data)}); err != nil {
				t.Fatal(err)
			}
		}
		if n := int(pad % 300_000); n > 0 {
			ctx = append(append([]byte(`{"p":"`+strings.Repeat("x", n)+`","v":`), ctx...), '}')
		}
		reqs, err := Encode(testJob, ctx, time.Unix(int64(seed%4e9), int64(seed%1e9)))
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		for _, r := range reqs {
			if b, _ := json.Marshal(r); len(b) >= contract.DispatchBodyBytes {
				t.Fatalf("body of %d bytes", len(b))
			}
		}
		got, err := assemble(Options{}, shuffleDup(reqs, seed))
		if err != nil {
			t.Fatalf("assemble: %v", err)
		}
		if !bytes.Equal(ctx, got) {
			t.Fatalf("round trip changed the context")
		}
	})
}

// FuzzParseLine: no panic, and whatever parses re-marshals to an equal payload.
func FuzzParseLine(f *testing.F) {
	for _, s := range assembleSeeds {
		f.Add([]byte(strings.SplitN(s, "\n", 2)[0]))
	}
	f.Add([]byte(`{"action":"agent_small","client_payload":{},"x":[1,{"y":null}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		et, p, err := ParseLine(line)
		if err != nil {
			return
		}
		b, err := json.Marshal(Request{EventType: et, ClientPayload: p})
		if err != nil {
			t.Fatal(err)
		}
		et2, p2, err := ParseLine(b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if et != et2 || !equalPayload(p, p2) {
			t.Fatalf("re-parse changed %q/%+v to %q/%+v", et, p, et2, p2)
		}
	})
}

func equalPayload(a, b Payload) bool {
	if (a.Shard == nil) != (b.Shard == nil) || (a.Shard != nil && *a.Shard != *b.Shard) {
		return false
	}
	a.Shard, b.Shard = nil, nil
	return a == b
}

// FuzzValidJSON: the fast validator agrees with encoding/json.Valid on
// every input, so choosing it for speed changes no decision.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\xff"}`, "{\"a\":\"\x01\"}", `{"a":"\u12"}`, `{"a":"\ud800"}`, `{}x`,
		`{"a":1e999}`, `{"a":01}`, `[`, `{"a":tru}`, "\ufeff{}", `{"a":1.}`, `{"a":[1,{"b":null}]}`, " \t\r\n{ } ", "{\v}"} {
		f.Add([]byte(s))
	}
	for _, s := range assembleSeeds {
		f.Add([]byte(strings.SplitN(s, "\n", 2)[0]))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}
