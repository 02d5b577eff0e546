package loopdetect

import (
	"bytes"
	"encoding/json"
)

// Canonical returns raw as canonical JSON: object keys sorted, no
// insignificant whitespace, numbers kept as written, no HTML escaping. Text
// that is not one JSON value is returned trimmed, unchanged, so two equally
// malformed calls still compare equal; ok reports whether it was JSON.
func Canonical(raw []byte) (canon string, ok bool) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return "{}", true // no arguments and {} are the same call
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return string(trimmed), false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// encoding/json writes map keys sorted and no whitespace.
	if err := enc.Encode(v); err != nil {
		return string(trimmed), false
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), true
}
