package prdiff

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Record is what the context's truncation record says of the diff.
type Record struct {
	BytesTotal  int64  `json:"diff_bytes_total"`
	Truncated   bool   `json:"diff_truncated"`
	Unavailable string `json:"diff_unavailable,omitempty"`
}

// Into returns the context object ctx with the diff under contract.KeyDiff
// (after review_comments, before trigger_comment; a diff ctx already holds
// is replaced) and rec's fields
// set in the truncation record. Every other key keeps its place and bytes.
func Into(ctx []byte, text string, rec Record) ([]byte, error) {
	top, err := members(ctx)
	if err != nil {
		return nil, fmt.Errorf("prdiff: context: %w", err)
	}
	d, err := json.Marshal(text) // sanitize re-encodes every string for the agent
	if err != nil {
		return nil, err
	}
	var out []member
	placed := false
	put := func() {
		if !placed {
			out = append(out, member{contract.KeyDiff, d})
			placed = true
		}
	}
	for _, m := range top {
		switch m.key {
		case contract.KeyDiff:
			continue
		case contract.KeyTriggerComment, contract.KeyTruncation:
			put()
		}
		if m.key == contract.KeyTruncation {
			if m.raw, err = setRecord(m.raw, rec); err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	put()
	return join(out), nil
}

// setRecord sets rec's fields in the truncation object raw, in place when
// present, appended otherwise.
func setRecord(raw json.RawMessage, rec Record) (json.RawMessage, error) {
	fields, err := members(raw)
	if err != nil {
		return nil, fmt.Errorf("prdiff: truncation record: %w", err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	add, err := members(b)
	if err != nil {
		return nil, err
	}
	for _, a := range add {
		found := false
		for i := range fields {
			if fields[i].key == a.key {
				fields[i].raw, found = a.raw, true
			}
		}
		if !found {
			fields = append(fields, a)
		}
	}
	return join(fields), nil
}

type member struct {
	key string
	raw json.RawMessage
}

// members reads a JSON object's members in order, values as they are.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{t.(string), v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return out, nil
}

func join(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key) // a decoded key: valid UTF-8, always encodes
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}
