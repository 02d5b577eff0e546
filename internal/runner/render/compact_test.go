package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/render/redactjson"
)

// FuzzCompactMatchesDecoder: on redacted (compact) arguments the one-walk
// helpers give exactly what the encoding/json based ones give.
func FuzzCompactMatchesDecoder(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls"}`, `{"b":1,"a":{"x": [1, 2]}}`, `[1, 2]`, `{}`, `[]`, `"s"`, `12`,
		`{"k\"ey":"v\\alue","n":[{},[],{"a":[1,{"b":null}]}]}`, "{\"x\u2028\":\"a\xffb\"}",
		`{"s":"` + strings.Repeat("é", 100) + `","t":true}`, `{"a":"}],:{["}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		red, err := redactjson.String(in)
		if err != nil {
			return
		}
		s := string(red)
		var want bytes.Buffer
		require.NoError(t, json.Indent(&want, red, "", "  "))
		assert.Equal(t, want.String(), string(indentCompact(red)))
		kv, ok := compactFields(s)
		wantKV, wantOK := objectFields(s)
		assert.Equal(t, wantOK, ok)
		assert.Equal(t, wantKV, kv)
		for _, cut := range []bool{false, true} {
			assert.Equal(t, shortArgs(s, cut), shortCompact(s, cut))
		}
	})
}
