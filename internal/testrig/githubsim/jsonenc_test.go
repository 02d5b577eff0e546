package githubsim

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// marshal must give json.Marshal's bytes for everything the renderers
// build: clients and golden files see the simulator's answers as they were.
func TestMarshalIsJSONMarshal(t *testing.T) {
	type pair struct {
		A string `json:"a"`
		B *int   `json:"b,omitempty"`
	}
	cases := []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"plain", "hello world 123 ~!@#$%^*()_+-=[]{}|;:',./?`"},
		{"escapes", "quote \" backslash \\ newline \n cr \r tab \t html <a href=\"x\">&amp;</a>"},
		{"other controls", "bell \a backspace \b formfeed \f nul \x00 unit sep \x1f del \x7f"},
		{"unicode", "é ü 日本 🚀 line sep \u2028 para sep \u2029"},
		{"invalid utf-8", "bad \xff\xfe byte and a lone \xe2\x82 half"},
		{"blob content", base64Lines([]byte("a blob's bytes, long enough for more than one line of base64 output \x00\xff"))},
		{"empty string", ""},
		{"numbers", obj{"int": 42, "neg": -7, "int64": int64(math.MaxInt64), "min": int64(math.MinInt64), "float": 2.5, "uint": uint(3)}},
		{"bools", obj{"t": true, "f": false}},
		{"nested", obj{"z": obj{"b": []any{1, "x", nil, obj{}}, "a": []string{"p", "<q>"}}, "a": []obj{{"k": "v"}, nil}, "m": obj{}}},
		{"typed nils", obj{"o": obj(nil), "l": []any(nil), "s": []string(nil), "ol": []obj(nil)}},
		{"empty lists", obj{"l": []any{}, "s": []string{}, "ol": []obj{}}},
		{"html keys", obj{"<k>": 1, "a&b": 2, "q\"": 3, "é": 4}},
		{"fallback types", obj{"raw": json.RawMessage(` { "x" : [1, 2] } `), "struct": pair{A: "<"}, "ptr": &pair{}, "map": map[string]int{"b": 1, "a": 2}}},
		{"list of renderers' shapes", []any{obj{"user": obj{"login": "alice", "id": int64(1)}, "labels": []any{}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, werr := json.Marshal(c.v)
			got, err := marshal(c.v)
			require.Equal(t, werr == nil, err == nil, "error: %v / %v", werr, err)
			assert.Equal(t, string(want), string(got))
		})
	}
	_, err := marshal(obj{"bad": math.Inf(1)})
	assert.Error(t, err, "a value json.Marshal refuses is refused")
}

func FuzzMarshalString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\nd\re\tf", "<>&", "\x00\x1f\x7f", "é\u2028\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := obj{s: s, "l": []any{s}, "s": []string{s}}
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, err := marshal(v)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	})
}
