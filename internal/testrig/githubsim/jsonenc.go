package githubsim

import (
	"encoding/json"
	"slices"
	"strconv"
)

// marshal is json.Marshal, byte for byte, without reflection for the
// shapes the simulator answers with (obj maps, []any, []string, strings,
// integers, bools, nil): reflection is most of a request's CPU otherwise.
func marshal(v any) ([]byte, error) {
	return appendJSON(make([]byte, 0, 1024), v)
}

func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case obj:
		if v == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json's order for string keys
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSON(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		return appendList(b, v, appendJSON)
	case []obj:
		return appendList(b, v, func(b []byte, o obj) ([]byte, error) { return appendJSON(b, o) })
	case []string:
		return appendList(b, v, appendString)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

func appendList[T any](b []byte, v []T, elem func([]byte, T) ([]byte, error)) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	var err error
	for i, e := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = elem(b, e); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendString writes s quoted as encoding/json does. ASCII is escaped
// here (the base64 of a blob has a newline every 60 characters); a string
// with any other byte or control character goes through json.Marshal, for
// its exact escapes.
func appendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7f || c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			data, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(b, data...), nil
		}
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '<':
			esc = `\u003c`
		case '>':
			esc = `\u003e`
		case '&':
			esc = `\u0026`
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}
