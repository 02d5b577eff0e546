package redactjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// referenceBytes is the first implementation, token by token through
// encoding/json: slow, obviously right, and the oracle for Bytes.
func referenceBytes(raw []byte) ([]byte, error) {
	type container struct {
		object bool
		n      int
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	var stack []container
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
		}
		if len(stack) == 0 && values == 1 {
			return nil, fmt.Errorf("%w: more than one value", ErrNotJSON)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out.WriteByte(byte(d))
			if len(stack) == 0 {
				values++
			}
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				out.WriteByte(':')
			case top.n > 0:
				out.WriteByte(',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(v))
			stack = append(stack, container{object: v == '{'})
			continue
		case string:
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(redact.String(v))
			out.Truncate(out.Len() - 1)
		case json.Number:
			out.WriteString(v.String())
		case bool:
			fmt.Fprint(&out, v)
		case nil:
			out.WriteString("null")
		}
		if len(stack) == 0 {
			values++
		}
	}
	if values != 1 || len(stack) != 0 {
		return nil, fmt.Errorf("%w: empty or unfinished input", ErrNotJSON)
	}
	return out.Bytes(), nil
}

// FuzzMatchesReference: the one-pass walk gives byte for byte what the
// token-by-token reference gives, and refuses what it refuses.
func FuzzMatchesReference(f *testing.F) {
	for _, s := range []string{
		`{"out":"line\n` + token + `"}`, `[1,"a",{"k":null}]`, `"\u0067hp_` + strings.Repeat("x", 36) + `"`,
		"\"x\u2028y\"", "\"a\xffb\"", `{"a":"\/\b\f\u00e9"}`, ` [ 1 , -0.5e3 , true ] `, `{"a":1} {"b":2}`,
		`"ghp\\_` + token[4:] + `"`, `"<b>&amp;` + token + `"`, "\"\x7f\"", `{}`, `[]`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, wantErr := referenceBytes([]byte(in))
		got, err := Bytes([]byte(in))
		if wantErr != nil {
			assert.ErrorIs(t, err, ErrNotJSON)
			return
		}
		if assert.NoError(t, err) {
			assert.Equal(t, string(want), string(got))
		}
		fromString, err := String(in)
		assert.NoError(t, err)
		assert.Equal(t, string(want), string(fromString))
	})
}
