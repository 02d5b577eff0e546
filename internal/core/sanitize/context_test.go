package sanitize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func TestContextGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "context", "thread.json"))
	require.NoError(t, err)
	out, rep, err := Context(in, 102)
	require.NoError(t, err)

	// json.Indent keeps key order and number literals, unlike a round trip
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, out, "", "  "))
	indented.WriteByte('\n')
	golden.Check(t, filepath.Join("testdata", "context", "thread.golden.json"), indented.Bytes())

	// comments: 103 (same second, later id), 104 (later), 105 (undated);
	// reviews: 10 (pending), 11 (later)
	assert.Equal(t, map[string]int{"comments": 3, "reviews": 2}, rep.Dropped)
	assert.Equal(t, 5, rep.Dropped["comments"]+rep.Dropped["reviews"])
	assert.Equal(t, 1, rep.WithheldEdited)
	assert.Equal(t, 4, rep.HTMLComments)   // description, issue body, comment 100, trigger
	assert.Equal(t, 4, rep.InvisibleChars) // description ZWSP, title RLO, x_unknown WJ+BOM
	assert.Equal(t, 3, rep.CodeEscapes)    // diff LRI+PDI, diff_hunk RLO
	assert.False(t, rep.TriggerEdited)
	assert.Equal(t, "2024-05-01T11:00:00Z", rep.TriggerAt.Format("2006-01-02T15:04:05Z07:00"))

	// numbers keep their literal form, even beyond int64/float64 precision
	assert.Contains(t, string(out), `"diff_bytes_dropped":12345678901234567890`)
	assert.Contains(t, string(out), `1.50`)

	again, rep2, err := Context(out, 102)
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again), "idempotent")
	assert.Empty(t, rep2.Dropped)
}

func TestContext(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		id      int64
		want    string
		wantErr error
	}{
		{
			name: "trigger from comments list when trigger_comment absent",
			in:   `{"comments":[{"id":1,"created_at":"2024-01-01T00:00:00Z"},{"id":2,"created_at":"2024-01-01T00:00:05Z"},{"id":3,"created_at":"2024-01-01T00:00:06Z"}]}`,
			id:   2,
			want: `{"comments":[{"id":1,"created_at":"2024-01-01T00:00:00Z"},{"id":2,"created_at":"2024-01-01T00:00:05Z"}]}`,
		},
		{
			name: "trigger from review_comments",
			in:   `{"review_comments":[{"id":7,"created_at":"2024-01-01T00:00:00Z"},{"id":8,"created_at":"2024-01-01T00:00:01Z"}]}`,
			id:   7,
			want: `{"review_comments":[{"id":7,"created_at":"2024-01-01T00:00:00Z"}]}`,
		},
		{
			name: "zero id accepts trigger_comment",
			in:   `{"trigger_comment":{"created_at":"2024-01-01T00:00:00Z","body":"a<!--b-->"}}`,
			want: `{"trigger_comment":{"created_at":"2024-01-01T00:00:00Z","body":"a"}}`,
		},
		{
			name: "duplicate keys collapse, last wins",
			in:   `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z"},"a":1,"a":2,"b\u200b":3,"b":4}`,
			id:   1,
			want: `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z"},"a":2,"b":4}`,
		},
		{
			name: "non-object items in dated lists are dropped",
			in:   `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z"},"comments":[1,"x",null,{"created_at":"nope"}]}`,
			id:   1,
			want: `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z"},"comments":[]}`,
		},
		{
			name: "timezone offsets compare as instants",
			in:   `{"trigger_comment":{"id":1,"created_at":"2024-01-01T12:00:00Z"},"comments":[{"id":2,"created_at":"2024-01-01T13:30:00+02:00"},{"id":3,"created_at":"2024-01-01T12:30:00+00:00"}]}`,
			id:   1,
			want: `{"trigger_comment":{"id":1,"created_at":"2024-01-01T12:00:00Z"},"comments":[{"id":2,"created_at":"2024-01-01T13:30:00+02:00"}]}`,
		},
		{
			name: "html is not escaped, control chars are",
			in:   `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z","body":"<b>&\"\\\n\t"}}`,
			id:   1,
			want: `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z","body":"<b>&\"\\\n\t"}}`,
		},
		{name: "not json", in: `{"a":`, id: 1, wantErr: ErrInvalidContext},
		{name: "array top level", in: `[]`, id: 1, wantErr: ErrInvalidContext},
		{name: "trailing data", in: `{} {}`, id: 1, wantErr: ErrInvalidContext},
		{name: "empty", in: ``, id: 1, wantErr: ErrInvalidContext},
		{name: "number out of float64 range", in: `{"a":[1e1000]}`, id: 1, wantErr: ErrInvalidContext},
		{name: "no trigger", in: `{"comments":[]}`, id: 1, wantErr: ErrNoTrigger},
		{name: "no trigger and no id", in: `{}`, id: 0, wantErr: ErrNoTrigger},
		{name: "trigger id mismatch", in: `{"trigger_comment":{"id":2,"created_at":"2024-01-01T00:00:00Z"}}`, id: 1, wantErr: ErrNoTrigger},
		{name: "trigger without id", in: `{"trigger_comment":{"created_at":"2024-01-01T00:00:00Z"}}`, id: 1, wantErr: ErrNoTrigger},
		{name: "trigger not an object", in: `{"trigger_comment":"x"}`, id: 0, wantErr: ErrNoTrigger},
		{name: "trigger undated", in: `{"trigger_comment":{"id":1}}`, id: 1, wantErr: ErrNoTrigger},
		{name: "trigger bad date", in: `{"trigger_comment":{"id":1,"created_at":"yesterday"}}`, id: 1, wantErr: ErrNoTrigger},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := Context([]byte(c.in), c.id)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				assert.Nil(t, out)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(out))
			assert.Equal(t, c.want, string(out), "key order and literals kept")
		})
	}
}

func TestContextTriggerEdited(t *testing.T) {
	in := `{"trigger_comment":{"id":1,"body":"go","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:10:00Z"},
	"comments":[{"id":1,"body":"go","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:10:00Z"}]}`
	out, rep, err := Context([]byte(in), 1)
	require.NoError(t, err)
	assert.True(t, rep.TriggerEdited)
	assert.Zero(t, rep.WithheldEdited, "the trigger is reported, not withheld")
	assert.NotContains(t, string(out), Withheld)
}

func TestContextTooDeep(t *testing.T) {
	deep := `{"trigger_comment":{"id":1,"created_at":"2024-01-01T00:00:00Z"},"x":`
	for range maxDepth + 10 {
		deep += "["
	}
	_, _, err := Context([]byte(deep), 1)
	require.ErrorIs(t, err, ErrInvalidContext)
	assert.Contains(t, err.Error(), "nested deeper")
}
