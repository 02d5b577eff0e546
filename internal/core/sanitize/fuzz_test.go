package sanitize

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func FuzzText(f *testing.F) {
	for _, s := range []string{
		"", "plain", "a<!--b-->c", "<!--", "<!-->x", "<!<!--x-->--y", "<!\u200b--z",
		"\u202e\u2066x\u2069", "\xff\xfe", "\U000E0041", "<!-- -\u200b-> tail", "-->",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, c := TextCounts(s)
		assert.True(t, utf8.ValidString(out))
		assert.NotContains(t, out, "<!--")
		assert.LessOrEqual(t, len(out), len(s)+2*c.InvalidBytes, "only replacement grows text")
		for _, r := range out {
			if isInvisible(r) {
				t.Fatalf("left %U", r)
			}
		}
		assert.Equal(t, out, Text(out), "idempotent")

		code, _ := CodeCounts(s)
		assert.True(t, utf8.ValidString(code))
		again, _ := CodeCounts(code)
		assert.Equal(t, code, again, "code idempotent")

		q := QuoteUntrusted(s)
		fence := q[:strings.Index(q, "text\n")]
		assert.True(t, strings.HasSuffix(q, "\n"+fence+"\n") || q == fence+"text\n"+fence+"\n")
		assert.Less(t, longestRun(q[len(fence):len(q)-len(fence)-1], '`'), len(fence))
	})
}

func FuzzContext(f *testing.F) {
	f.Add([]byte(`{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z","body":"x<!--y-->"}}`), int64(1))
	f.Add([]byte(`{"comments":[{"id":1,"created_at":"2024-01-01T00:00:00Z"},{"id":2,"created_at":"2024-01-01T00:00:01Z","updated_at":"2024-01-02T00:00:00Z"}]}`), int64(1))
	f.Add([]byte(`{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z"},"a":1,"a\u200b":[1e5,-0.0,"\ud800"],"diff":"\u202e"}`), int64(1))
	f.Add([]byte(`{"trigger_comment":{"created_at":"2024-01-01T00:00:00Z"},"reviews":[{"submitted_at":"2023-01-01T00:00:00Z"},{}]}`), int64(0))
	f.Add([]byte(`[[[[`), int64(0))
	f.Add([]byte("{\"\xff\":\"\xfe\"}"), int64(0))
	f.Fuzz(func(t *testing.T, in []byte, id int64) {
		out, _, err := Context(in, id)
		if err != nil {
			return
		}
		require.True(t, json.Valid(out), "valid JSON: %q", out)
		var obj map[string]any
		require.NoError(t, json.Unmarshal(out, &obj), "an object")
		again, _, err := Context(out, id)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again), "idempotent")
	})
}
