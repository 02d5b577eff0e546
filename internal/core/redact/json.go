package redact

import (
	"bytes"
	"encoding/json"
)

// JSON returns the JSON document data with every string (keys included)
// redacted as String does, so a secret inside a value cannot take the
// document's quotes or escapes with it. Text that is not one JSON value is
// redacted as plain text. Nothing to redact returns data unchanged.
func JSON(data []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []byte(String(string(data)))
	}
	changed := false
	v = walk(v, &changed)
	if !changed {
		return data
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(String(string(data)))
	}
	out := b.Bytes()
	if !bytes.HasSuffix(data, []byte("\n")) {
		out = bytes.TrimSuffix(out, []byte("\n"))
	}
	return out
}

// JSONLines is JSON for each line of a JSON-lines file.
func JSONLines(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var b bytes.Buffer
	b.Grow(len(data))
	for _, l := range lines {
		body := bytes.TrimSuffix(l, []byte("\n"))
		b.Write(JSON(body))
		if len(body) < len(l) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func walk(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if r := String(x); r != x {
			*changed = true
			return r
		}
	case []any:
		for i := range x {
			x[i] = walk(x[i], changed)
		}
	case map[string]any:
		for k, e := range x {
			e = walk(e, changed)
			if rk := String(k); rk != k {
				*changed = true
				delete(x, k)
				k = rk
			}
			x[k] = e
		}
	}
	return v
}
