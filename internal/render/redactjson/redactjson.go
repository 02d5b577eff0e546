// Package redactjson removes secrets from JSON text string by string.
//
// Redacting the encoded text is not enough: an escape such as `\n` glues the
// letter n to the start of a token (`\nghp_…` encodes as `\\nghp_…`), the
// word boundary the token patterns need disappears and the token survives.
// So every string (keys too) is decoded, redacted and encoded again; key
// order and numbers are kept as written.
package redactjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mention-runner/mention-runner/internal/redact"
)

// ErrNotJSON means the input is not exactly one JSON value.
var ErrNotJSON = errors.New("not a single JSON value")

// container is one open object or array while walking the tokens.
type container struct {
	object bool
	n      int // values (arrays) or keys+values (objects) written so far
}

// Bytes returns raw with every string redacted, compact (no insignificant
// whitespace) and with HTML characters left as they are.
func Bytes(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(raw))
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
		// separator before this token
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
			writeString(&out, redact.String(v))
		case json.Number:
			out.WriteString(v.String())
		case bool:
			if v {
				out.WriteString("true")
			} else {
				out.WriteString("false")
			}
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

// Marshal encodes v as JSON and redacts it.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Bytes(raw)
}

func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // encoding a string cannot fail
	out.Truncate(out.Len() - 1) // Encode adds a newline
}
