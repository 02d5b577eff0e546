package prdiff

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInto(t *testing.T) {
	for _, tc := range []struct {
		name, ctx string
		rec       Record
		want      string
	}{
		{"in the dispatcher's place, record fields appended",
			`{"repository":{"id":1},"comments":[],"reviews":[],"review_comments":[],"trigger_comment":{"id":2},"truncation":{"budget_bytes":9,"after_trigger_ids":[]}}`,
			Record{BytesTotal: 7},
			`{"repository":{"id":1},"comments":[],"reviews":[],"review_comments":[],"diff":"a \u003cb\u003e\n","trigger_comment":{"id":2},"truncation":{"budget_bytes":9,"after_trigger_ids":[],"diff_bytes_total":7,"diff_truncated":false}}`},
		{"an older context's diff and record replaced",
			`{"diff":"old","trigger_comment":{"id":2},"truncation":{"diff_bytes_total":3,"diff_truncated":false}}`,
			Record{BytesTotal: 99, Truncated: true},
			`{"diff":"a \u003cb\u003e\n","trigger_comment":{"id":2},"truncation":{"diff_bytes_total":99,"diff_truncated":true}}`},
		{"unavailable, no trigger or record keys", `{"x":[1 ,2]}`, Record{Unavailable: "406 too large"},
			`{"x":[1 ,2],"diff":"a \u003cb\u003e\n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Into([]byte(tc.ctx), "a <b>\n", tc.rec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
	for _, bad := range []string{`[1]`, `{"a":1} {}`, `{"a":`, `{"truncation":[1]}`} {
		_, err := Into([]byte(bad), "", Record{})
		assert.Error(t, err, bad)
	}
}

// FuzzInto: whatever the context, Into either refuses it or returns valid
// JSON holding the diff as given.
func FuzzInto(f *testing.F) {
	f.Add([]byte(`{"trigger_comment":{},"truncation":{}}`), "diff --git a/x b/x\n")
	f.Add([]byte(`{"diff":1,"diff":2,"\u00e9":"\ud800"}`), "\xff")
	f.Fuzz(func(t *testing.T, ctx []byte, diff string) {
		got, err := Into(ctx, diff, Record{BytesTotal: 1})
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
		var c struct {
			Diff *string `json:"diff"`
		}
		if err := json.Unmarshal(got, &c); err != nil || c.Diff == nil {
			t.Fatalf("no diff in %s: %v", got, err)
		}
	})
}
