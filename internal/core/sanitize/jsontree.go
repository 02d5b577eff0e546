package sanitize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack; GitHub
// responses nest a handful of levels.
const maxDepth = 256

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a JSON value that keeps object key order and number literals as
// written, so a sanitized context differs from its input only where it must.
type node struct {
	kind kind
	str  string   // string value, number literal, or "true"/"false"
	keys []string // object keys, parallel to vals
	vals []*node  // object values, or array elements
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	// last wins, as encoding/json does, should duplicates remain
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *node) has(key string) bool { return n.get(key) != nil }

func (n *node) getString(key string) (string, bool) {
	v := n.get(key)
	if v == nil || v.kind != kindString {
		return "", false
	}
	return v.str, true
}

func (n *node) getInt(key string) (int64, bool) {
	v := n.get(key)
	if v == nil || v.kind != kindNumber {
		return 0, false
	}
	i, err := strconv.ParseInt(v.str, 10, 64)
	return i, err == nil
}

func (n *node) setString(key, s string) {
	for i, k := range n.keys {
		if k == key && n.vals[i].kind == kindString {
			n.vals[i].str = s
		}
	}
}

// errSyntax marks input that is not one well-formed JSON value.
var errSyntax = errors.New("invalid JSON")

func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the top-level value", errSyntax)
	}
	return n, nil
}

func decodeValue(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", errSyntax, maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %v", errSyntax, err)
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool, str: strconv.FormatBool(t)}, nil
	case json.Number:
		// valid JSON, but every consumer decoding into float64 would fail
		if _, err := strconv.ParseFloat(string(t), 64); err != nil {
			return nil, fmt.Errorf("%w: number %.40s out of range", errSyntax, t)
		}
		return &node{kind: kindNumber, str: string(t)}, nil
	case string:
		return &node{kind: kindString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &node{kind: kindArray}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token() // ']'
			return n, wrapSyntax(err)
		case '{':
			n := &node{kind: kindObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, wrapSyntax(err)
				}
				k, _ := kt.(string) // the decoder guarantees a string key here
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token() // '}'
			return n, wrapSyntax(err)
		}
	}
	return nil, fmt.Errorf("%w: unexpected token %v", errSyntax, tok)
}

func wrapSyntax(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", errSyntax, err)
}

// encode appends n as compact JSON. Strings must already be valid UTF-8.
func (n *node) encode(buf []byte) []byte {
	switch n.kind {
	case kindNull:
		return append(buf, "null"...)
	case kindBool, kindNumber:
		return append(buf, n.str...)
	case kindString:
		return appendQuoted(buf, n.str)
	case kindArray:
		buf = append(buf, '[')
		for i, v := range n.vals {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = v.encode(buf)
		}
		return append(buf, ']')
	default:
		buf = append(buf, '{')
		for i, k := range n.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendQuoted(buf, k)
			buf = append(buf, ':')
			buf = n.vals[i].encode(buf)
		}
		return append(buf, '}')
	}
}

const hexDigits = "0123456789abcdef"

// appendQuoted writes s as a JSON string without HTML escaping, so bodies
// stay readable in the run record.
func appendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\':
				buf = append(buf, '\\', b)
			case b == '\n':
				buf = append(buf, '\\', 'n')
			case b == '\r':
				buf = append(buf, '\\', 'r')
			case b == '\t':
				buf = append(buf, '\\', 't')
			case b < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			default:
				buf = append(buf, b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// valid JSON, but not valid JavaScript; escape like encoding/json
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
