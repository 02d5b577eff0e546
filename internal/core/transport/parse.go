package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ParseLine reads one request body ({"event_type":…,"client_payload":{…}})
// or one repository_dispatch webhook event ({"action":…,"client_payload":{…},
// …}; the webhook's other fields are ignored). Keys match exactly (not
// case-insensitively as encoding/json would); client_payload and shard allow
// no unknown, duplicate or null fields. Semantic checks (uuid, timestamp,
// base64, index range) are left to Assembler.Add.
func ParseLine(line []byte) (eventType string, p Payload, err error) {
	var rawET, rawAction, rawPayload json.RawMessage
	var extra []string
	err = decodeObject(line, func(key string, v json.RawMessage) error {
		switch key {
		case "event_type":
			rawET = v
		case "action":
			rawAction = v
		case "client_payload":
			rawPayload = v
		default:
			extra = append(extra, key)
		}
		return nil
	})
	if err != nil {
		return "", Payload{}, badLine("line is not a JSON object", err)
	}
	var field string
	switch {
	case rawET != nil && rawAction != nil:
		return "", Payload{}, badLine("line has both event_type (request body) and action (webhook event)", nil)
	case rawET != nil:
		if len(extra) > 0 {
			return "", Payload{}, badLine(fmt.Sprintf("request body has unexpected field %q (only event_type and client_payload are allowed)", extra[0]), nil)
		}
		field = "event_type"
		err = decodeString(rawET, &eventType)
	case rawAction != nil:
		field = "action"
		err = decodeString(rawAction, &eventType)
	default:
		return "", Payload{}, badLine("line has neither event_type (request body) nor action (repository_dispatch webhook event)", nil)
	}
	if err != nil {
		return "", Payload{}, badLine(field+" must be a string", err)
	}
	if rawPayload == nil {
		return "", Payload{}, badLine("line has no client_payload", nil)
	}
	p, err = decodePayload(rawPayload)
	if err != nil {
		return "", Payload{}, badLine("client_payload", err)
	}
	return eventType, p, nil
}

func badLine(msg string, err error) *Error {
	return &Error{Kind: KindBadPayload, Index: -1, Msg: msg, Err: err}
}

// decodePayload reads client_payload, a value of a line decodeObject has
// validated whole.
func decodePayload(raw json.RawMessage) (Payload, error) {
	var p Payload
	err := walkObject(raw, func(key string, v json.RawMessage) error {
		switch key {
		case "jobid":
			return decodeString(v, &p.JobID)
		case "context_b64":
			return decodeString(v, &p.ContextB64)
		case "timestamp":
			return decodeString(v, &p.Timestamp)
		case "shard":
			var s Shard
			err := walkObject(v, func(key string, v json.RawMessage) error {
				switch key {
				case "index":
					return decodeInt(v, &s.Index)
				case "total":
					return decodeInt(v, &s.Total)
				}
				return fmt.Errorf("unknown field %q (allowed: index, total)", key)
			})
			p.Shard = &s
			return err
		}
		return fmt.Errorf("unknown field %q (allowed: jobid, shard, context_b64, timestamp)", key)
	})
	return p, err
}

// decodeObject walks one JSON object, calling set for each key in order. It
// refuses duplicate keys, null values and anything after the object. The
// whole of b is validated once by the fast validator; the walk that follows
// only finds where each value ends (walkObject, also for the objects
// inside), so a 64 KB context_b64 is read twice (validated, then copied)
// instead of once more for each object around it.
func decodeObject(b []byte, set func(key string, v json.RawMessage) error) error {
	if !validJSON(b) {
		return syntaxError(b)
	}
	return walkObject(b, set)
}

// walkObject is decodeObject on a value already validated as part of a
// whole line.
func walkObject(b []byte, set func(key string, v json.RawMessage) error) error {
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return fmt.Errorf("expected a JSON object, found %s", jsonKind(b[i]))
	}
	seen := map[string]bool{}
	for i = skipSpace(b, i+1); b[i] != '}'; {
		end := skipValue(b, i)
		var key string
		if err := decodeString(b[i:end], &key); err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("duplicate field %q", key)
		}
		seen[key] = true
		start := skipSpace(b, skipSpace(b, end)+1) // past the colon
		end = skipValue(b, start)
		v := b[start:end:end]
		if bytes.Equal(v, []byte("null")) {
			return fmt.Errorf("field %q is null", key)
		}
		if err := set(key, v); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
		if i = skipSpace(b, end); b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return nil
}

// syntaxError explains why b is not one JSON value, in encoding/json's words.
func syntaxError(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return errors.New("invalid JSON")
}

// skipSpace returns the index of the first non-space byte at or after i in
// valid JSON.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue returns the end of the value starting at b[i] in valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

// skipString returns the index after the closing quote of the string
// starting at b[i] in valid JSON. It looks for quotes and backslashes with
// IndexByte (bytes.IndexAny steps through every byte); the next quote is
// found again only once an escape has taken the one it had found.
func skipString(b []byte, i int) int {
	q := -1 // the next '"' at or after i, once found
	for i++; i < len(b); {
		if q < i {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				return len(b)
			}
			q = i + j
		}
		j := bytes.IndexByte(b[i:q], '\\')
		if j < 0 {
			return q + 1
		}
		i += j + 2 // an escape: skip the backslash and the escaped byte
	}
	return min(i, len(b))
}

func decodeString(v json.RawMessage, dst *string) error {
	if len(v) == 0 || v[0] != '"' {
		return fmt.Errorf("want a string, got %s", truncate(v))
	}
	// A valid string without escapes is its own text, once its bytes are
	// valid UTF-8 (encoding/json would replace bad bytes with U+FFFD).
	if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		*dst = string(inner)
		return nil
	}
	return json.Unmarshal(v, dst)
}

func decodeInt(v json.RawMessage, dst *int) error {
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("want an integer, got %s", truncate(v))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
