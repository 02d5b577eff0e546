package threadctx

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func comment(id int64, at time.Time, body string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"id": id, "node_id": fmt.Sprintf("IC_%d", id), "body": body,
		"user": map[string]any{"login": "u"}, "created_at": at.Format(time.RFC3339), "updated_at": at.Format(time.RFC3339)})
	return b
}

// thread is n comments a minute apart, each about size bytes; the trigger
// is comment trig (1-based id).
func thread(n, size int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = comment(int64(i+1), t0.Add(time.Duration(i)*time.Minute), strings.Repeat("x", size))
	}
	return out
}

func request(comments []json.RawMessage, trig int64) Request {
	return Request{Repo: "o/r", Number: 1, TriggerNodeID: fmt.Sprintf("IC_%d", trig),
		Repository: json.RawMessage(`{"full_name":"o/r"}`), Issue: json.RawMessage(`{"number":1,"node_id":"I_1","body":"b"}`), Comments: comments}
}

func keptIDs(t *testing.T, res *Result) []int64 {
	var m struct {
		Comments []struct{ ID int64 } `json:"comments"`
	}
	require.NoError(t, json.Unmarshal(res.JSON, &m))
	var ids []int64
	for _, c := range m.Comments {
		ids = append(ids, c.ID)
	}
	return ids
}

func TestPriorityOrder(t *testing.T) {
	cases := []struct {
		n    int
		want []int
	}{
		{0, []int{}},
		{1, []int{0}},
		{3, []int{2, 1, 0}},
		{5, []int{4, 3, 2, 0, 1}},
		{10, []int{9, 8, 7, 0, 6, 5, 4, 1, 3, 2}},
	}
	for _, tc := range cases {
		pool := make([]item, tc.n)
		for i := range pool {
			pool[i] = item{id: int64(i), at: t0.Add(time.Duration(i) * time.Second)}
		}
		got := []int{}
		for _, it := range priority(pool) {
			got = append(got, int(it.id))
		}
		assert.Equal(t, tc.want, got, "n=%d", tc.n)
	}
}

func TestTruncationKeepsNewestAndOldest(t *testing.T) {
	// 20 comments of ~1 KB, trigger = #20, budget for about 8 of them.
	res, err := Build(context.Background(), nil, request(thread(20, 1000), 20), Options{MaxBytes: 9500})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(res.JSON), 9500)
	// trigger 20, then 19 18 17 | 1 | 16 15 14 | 2 … while they fit.
	ids := keptIDs(t, res)
	assert.Equal(t, []int64{1, 15, 16, 17, 18, 19, 20}, ids)
	tr := res.Truncation
	assert.Equal(t, 20, tr.CommentsTotal)
	assert.Equal(t, len(ids), tr.CommentsKept)
	assert.Len(t, tr.DroppedIDs, 20-len(ids))
	assert.Equal(t, 9500, tr.BudgetBytes)
}

func TestTriggerAlwaysKeptAndLaterDropped(t *testing.T) {
	cs := thread(5, 10)
	cs = append(cs, comment(6, t0.Add(time.Hour), "edited later"))
	// Comment 2 edited after the trigger (#4).
	var m map[string]any
	require.NoError(t, json.Unmarshal(cs[1], &m))
	m["updated_at"] = t0.Add(2 * time.Hour).Format(time.RFC3339)
	cs[1], _ = json.Marshal(m)
	res, err := Build(context.Background(), nil, request(cs, 4), Options{MaxBytes: 1})
	require.NoError(t, err)
	assert.Equal(t, []int64{4}, keptIDs(t, res), "over budget: only the trigger")
	assert.ElementsMatch(t, []int64{2, 5, 6}, res.Truncation.AfterTriggerIDs)
	assert.Equal(t, "x"+strings.Repeat("x", 9), res.Trigger.Body)

	res, err = Build(context.Background(), nil, request(cs, 4), Options{})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 3, 4}, keptIDs(t, res))
	assert.Equal(t, []int64{}, res.Truncation.DroppedIDs)
}

func TestTriggerNotFound(t *testing.T) {
	_, err := Build(context.Background(), nil, request(thread(3, 1), 99), Options{})
	assert.ErrorIs(t, err, ErrTriggerNotFound)
}

func TestBodyTriggerAndRawBytesKept(t *testing.T) {
	req := request([]json.RawMessage{json.RawMessage(`{ "id": 1, "node_id": "IC_1", "body": "<b>&</b>", "created_at": "2024-05-01T12:00:00Z" }`)}, 0)
	req.TriggerNodeID = "I_1"
	res, err := Build(context.Background(), nil, req, Options{})
	require.NoError(t, err)
	assert.Contains(t, string(res.JSON), `"body":"<b>&</b>"`, "no HTML escaping, only whitespace compacted")
	assert.Contains(t, string(res.JSON), `"trigger_comment":{"number":1,"node_id":"I_1","body":"b"}`)
	assert.True(t, json.Valid(res.JSON))
}

func FuzzAssemble(f *testing.F) {
	f.Add(`{"id":1,"node_id":"IC_1","created_at":"2024-05-01T12:00:00Z","body":"x"}`, 100, "IC_1")
	f.Add(`{"id":2,"node_id":"IC_2","created_at":"bad"}`, 0, "I_1")
	f.Add(`[1,2]`, 10, "IC_1")
	f.Fuzz(func(t *testing.T, raw string, budget int, trig string) {
		req := request([]json.RawMessage{json.RawMessage(raw), comment(7, t0, "y")}, 7)
		req.TriggerNodeID = trig
		res, err := Build(context.Background(), nil, req, Options{MaxBytes: budget})
		if err != nil {
			return
		}
		if !json.Valid(res.JSON) {
			t.Fatalf("invalid JSON: %s", res.JSON)
		}
	})
}

func BenchmarkAssemble2000(b *testing.B) {
	req := request(thread(2000, 600), 2000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(context.Background(), nil, req, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
