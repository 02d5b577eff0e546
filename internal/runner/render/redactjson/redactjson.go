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
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// ErrNotJSON means the input is not exactly one JSON value.
var ErrNotJSON = errors.New("not a single JSON value")

// Bytes returns raw with every string redacted, compact (no insignificant
// whitespace) and with HTML characters left as they are.
func Bytes(raw []byte) ([]byte, error) {
	return appendRedacted(nil, string(raw))
}

// String is Bytes for text held as a string (no copy of the input).
func String(raw string) ([]byte, error) {
	return appendRedacted(nil, raw)
}

// appendRedacted validates raw once, then walks its bytes: whitespace
// outside strings goes, numbers and literals stay as written, and each
// string (keys too) is redacted as the text it decodes to.
func appendRedacted(out []byte, raw string) ([]byte, error) {
	if !fastjson.Valid(unsafe.Slice(unsafe.StringData(raw), len(raw))) {
		return nil, fmt.Errorf("%w: %s", ErrNotJSON, whyNot(raw))
	}
	out = slices.Grow(out, len(raw))
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end, plain := stringEnd(raw, i)
			out = appendString(out, raw[i:end], plain)
			i = end
		default:
			out = append(out, c)
			i++
		}
	}
	return out, nil
}

// stringEnd returns the index just past the string literal that starts at
// raw[i] (valid JSON), and whether the literal is plain: no escapes, valid
// UTF-8 and no U+2028/U+2029, so it decodes to its own bytes and encodes
// back to itself.
func stringEnd(raw string, i int) (int, bool) {
	plain := true
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return j + 1, plain && utf8.ValidString(raw[i+1:j]) && !strings.Contains(raw[i+1:j], "\u2028") && !strings.Contains(raw[i+1:j], "\u2029")
		case c == '\\':
			plain = false
			j++ // the escaped byte cannot end the string
		}
	}
	return len(raw), false // unreachable for valid JSON
}

// appendString appends the redacted form of one string literal lit. A
// plain literal with nothing to redact is copied; any other is decoded
// and encoded again (so an escape cannot hide a token from the patterns).
func appendString(out []byte, lit string, plain bool) []byte {
	var s string
	if plain {
		s = lit[1 : len(lit)-1]
		if red := redact.String(s); red != s {
			return appendQuoted(out, red)
		}
		return append(out, lit...)
	}
	if err := json.Unmarshal([]byte(lit), &s); err != nil {
		return appendQuoted(out, redact.String(lit)) // unreachable for valid JSON
	}
	return appendQuoted(out, redact.String(s))
}

// appendQuoted encodes s as encoding/json does with HTML escaping off.
func appendQuoted(out []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// whyNot says why raw is not one JSON value, in encoding/json's words.
func whyNot(raw string) string {
	dec := json.NewDecoder(strings.NewReader(raw))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return "empty input"
		}
		return err.Error()
	}
	return "more than one value"
}

// Marshal encodes v as JSON and redacts it.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Bytes(raw)
}
