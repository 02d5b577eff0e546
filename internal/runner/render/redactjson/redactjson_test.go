package redactjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var token = "ghp_" + strings.Repeat("a1B2", 9)

func TestBytes(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"escape glued to token", `{"out":"line\n` + token + `"}`, `{"out":"line\n[REDACTED:github-token]"}`},
		{"key order kept", `{"b":1,"a":[true,false,null,1.50e3],"c":{}}`, `{"b":1,"a":[true,false,null,1.50e3],"c":{}}`},
		{"keys redacted", `{"` + token + `":"x"}`, `{"[REDACTED:github-token]":"x"}`},
		{"html kept", `"<b>&"`, `"<b>&"`},
		{"whitespace dropped", "[ 1 , 2 ,\n[ ] ]", `[1,2,[]]`},
		{"scalar", `"` + token + `"`, `"[REDACTED:github-token]"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Bytes([]byte(c.in))
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
		})
	}
}

func TestBytesRejects(t *testing.T) {
	for _, in := range []string{"", "{", `{"a":1} {"b":2}`, `1 2`, `{"a" 1}`, "nope"} {
		t.Run(in, func(t *testing.T) {
			_, err := Bytes([]byte(in))
			assert.ErrorIs(t, err, ErrNotJSON)
		})
	}
}

func FuzzBytes(f *testing.F) {
	f.Add(`{"out":"line\n` + token + `"}`)
	f.Add(`[1,"a",{"k":null}]`)
	f.Add(`"\u0067hp_` + strings.Repeat("x", 36) + `"`)
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Bytes([]byte(in))
		if err != nil {
			return
		}
		require.True(t, json.Valid(out), "output must stay valid JSON: %q", out)
		var v any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // numbers are kept as written, even past float64's range
		require.NoError(t, dec.Decode(&v))
		again, err := Bytes(out)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again), "redaction is idempotent")
	})
}
