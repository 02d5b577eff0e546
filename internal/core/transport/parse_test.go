package transport

import (
	"encoding/json"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLineAccepts(t *testing.T) {
	small := Payload{JobID: testJob, ContextB64: "e30=", Timestamp: "2025-11-22T05:09:00Z"}
	shard := Payload{JobID: testJob, Shard: &Shard{Index: 1, Total: 3}, ContextB64: "e30=", Timestamp: "2025-11-22T05:09:00Z"}
	cases := []struct {
		name, line, event string
		want              Payload
	}{
		{"request small", `{"event_type":"agent_small","client_payload":{"jobid":"` + testJob + `","context_b64":"e30=","timestamp":"2025-11-22T05:09:00Z"}}`, contract.EventAgentSmall, small},
		{"request shard", `{"client_payload":{"timestamp":"2025-11-22T05:09:00Z","shard":{"total":3,"index":1},"jobid":"` + testJob + `","context_b64":"e30="},"event_type":"agent_shard"}`, contract.EventAgentShard, shard},
		{"webhook event", `{"action":"agent_shard","branch":"main","client_payload":{"jobid":"` + testJob + `","shard":{"index":1,"total":3},"context_b64":"e30=","timestamp":"2025-11-22T05:09:00Z"},"repository":{"full_name":"o/r","owner":{"login":"o"}},"sender":{"login":"bot"},"installation":{"id":1}}`, contract.EventAgentShard, shard},
		{"whitespace around", " \t{\"event_type\":\"agent_small\",\"client_payload\":{\"jobid\":\"" + testJob + "\",\"context_b64\":\"e30=\",\"timestamp\":\"2025-11-22T05:09:00Z\"}}\r\n", contract.EventAgentSmall, small},
		{"unknown event type is Add's business", `{"event_type":"other","client_payload":{}}`, "other", Payload{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			et, p, err := ParseLine([]byte(c.line))
			require.NoError(t, err)
			assert.Equal(t, c.event, et)
			assert.Equal(t, c.want, p)
		})
	}
}

func TestParseLineRoundTripsEncode(t *testing.T) {
	for _, r := range mustEncode(t, object(1, 100_000)) {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		et, p, err := ParseLine(b)
		require.NoError(t, err)
		assert.Equal(t, r, Request{EventType: et, ClientPayload: p})
	}
}

func TestParseLineRejects(t *testing.T) {
	const cp = `"client_payload":{"jobid":"` + testJob + `","context_b64":"e30=","timestamp":"t"}`
	cases := []struct{ name, line, msg string }{
		{"empty", ``, "not a JSON object"},
		{"not json", `hello`, "not a JSON object"},
		{"array", `[1]`, "expected a JSON object"},
		{"null", `null`, "expected a JSON object"},
		{"trailing data", `{"event_type":"agent_small",` + cp + `} {}`, "after the JSON object"},
		{"truncated", `{"event_type":"agent_small",` + cp, "not a JSON object"},
		{"both forms", `{"event_type":"agent_small","action":"agent_small",` + cp + `}`, "both event_type"},
		{"neither form", `{` + cp + `}`, "neither event_type"},
		{"extra request field", `{"event_type":"agent_small","ref":"main",` + cp + `}`, `unexpected field "ref"`},
		{"event_type not string", `{"event_type":5,` + cp + `}`, "event_type must be a string"},
		{"action not string", `{"action":["x"],` + cp + `}`, "action must be a string"},
		{"no client_payload", `{"event_type":"agent_small"}`, "no client_payload"},
		{"client_payload null", `{"event_type":"agent_small","client_payload":null}`, "is null"},
		{"client_payload array", `{"event_type":"agent_small","client_payload":[]}`, "expected a JSON object"},
		{"unknown payload field", `{"event_type":"agent_small","client_payload":{"jobid":"x","trigger":"y"}}`, `unknown field "trigger"`},
		{"case-folded field", `{"event_type":"agent_small","client_payload":{"JobID":"x"}}`, `unknown field "JobID"`},
		{"duplicate field", `{"event_type":"agent_small","client_payload":{"jobid":"a","jobid":"b"}}`, `duplicate field "jobid"`},
		{"duplicate top field", `{"event_type":"agent_small","event_type":"agent_shard",` + cp + `}`, `duplicate field "event_type"`},
		{"null field", `{"event_type":"agent_small","client_payload":{"jobid":null}}`, "is null"},
		{"jobid number", `{"event_type":"agent_small","client_payload":{"jobid":7}}`, "want a string"},
		{"unknown shard field", `{"event_type":"agent_shard","client_payload":{"shard":{"index":0,"total":1,"sum":3}}}`, `unknown field "sum"`},
		{"fractional index", `{"event_type":"agent_shard","client_payload":{"shard":{"index":0.5,"total":1}}}`, "want an integer"},
		{"huge index", `{"event_type":"agent_shard","client_payload":{"shard":{"index":1e99,"total":1}}}`, "want an integer"},
		{"string total", `{"event_type":"agent_shard","client_payload":{"shard":{"index":0,"total":"2"}}}`, "want an integer"},
		{"shard not object", `{"event_type":"agent_shard","client_payload":{"shard":3}}`, "expected a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseLine([]byte(c.line))
			require.Error(t, err)
			assert.True(t, IsKind(err, KindBadPayload), "kind of %v", err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}
