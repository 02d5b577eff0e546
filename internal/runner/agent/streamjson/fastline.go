package streamjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	fastjson "github.com/segmentio/encoding/json"
)

// messageLine fills l from an assistant or user line (raw is valid JSON)
// by one walk over its bytes, as fastjson.Parse would with
// DontCopyRawMessage, for the common shape only: anything it is not sure
// to read exactly as the struct decoder does (an escape or non-ASCII byte
// in a key, a key that matches a field only when case is ignored, a
// repeated field, a null, an escaped string, a number that is not a plain
// integer, any other field of line) returns false, and the caller decodes
// the line the general way. FuzzOneParse holds the two paths equal.
//
// The message goes to msg (the decoder's, reused line after line); short
// strings come from in (nil: no interning).
func messageLine(raw []byte, l *line, msg *message, in *interner) bool {
	c := cursor{b: raw, in: in}
	var seen [4]bool
	ok := c.object(func(key []byte) bool {
		// every field of line is named, so one this walk does not fill
		// (a "model" on an assistant line…) sends the line down the general path
		f, ok := field(key, "type", "subtype", "session_id", "error", "message",
			"model", "cwd", "tools", "mcp_servers", "is_error", "num_turns", "duration_ms",
			"total_cost_usd", "result", "errors", "permission_denials", "usage", "modelUsage")
		switch {
		case !ok || f > 4:
			return false
		case f < 0:
			c.skip()
			return true
		case f < 4 && seen[f]:
			return false
		}
		switch f {
		case 0:
			s, ok := c.plain()
			l.Type = &s
			seen[f] = true
			return ok
		case 1, 2, 3:
			s, ok := c.plain()
			*[]*string{&l.Subtype, &l.SessionID, &l.Error}[f-1] = s
			seen[f] = true
			return ok
		}
		if l.Message != nil {
			return false
		}
		*msg = message{}
		l.Message = msg
		return c.message(l.Message)
	})
	l.walked = ok && l.Type != nil && (*l.Type == "assistant" || *l.Type == "user") && l.Message != nil
	return l.walked
}

func (c *cursor) message(m *message) bool {
	return c.fields(messageFields, func(f int) bool {
		switch f {
		case 0, 1:
			s, ok := c.plain()
			*[]*string{&m.ID, &m.Model}[f] = s
			return ok
		case 2:
			m.Usage = &usage{}
			return c.usage(m.Usage)
		}
		start := c.i
		if c.peek() == 'n' {
			return false // null content: left to the general path
		}
		c.skip()
		m.Content = c.b[start:c.i]
		return true
	})
}

func (c *cursor) usage(u *usage) bool {
	return c.fields(usageFields, func(f int) bool {
		n, ok := c.integer()
		*[]*int{&u.InputTokens, &u.OutputTokens}[f] = n
		return ok
	})
}

// The keys the walk reads, in the order fields hands them to fn.
var (
	messageFields = []string{"id", "model", "usage", "content"}
	usageFields   = []string{"input_tokens", "output_tokens"}
)

// fields walks an object whose keys may be any of names, each at most
// once: fn reads the value of names[f]; other keys are skipped. A repeated
// or unreadable key leaves the line to the general decoder.
func (c *cursor) fields(names []string, fn func(f int) bool) bool {
	var seen uint64 // names has fewer than 64 entries
	return c.object(func(key []byte) bool {
		f, ok := field(key, names...)
		switch {
		case !ok:
			return false
		case f < 0:
			c.skip()
			return true
		case seen&(1<<f) != 0:
			return false
		}
		seen |= 1 << f
		return fn(f)
	})
}

// field says which of names key (a string literal) is: its index, -1 for
// none (skip it), or ok=false when only the general decoder can tell.
func field(key []byte, names ...string) (int, bool) {
	k := key[1 : len(key)-1]
	for _, b := range k {
		if b == '\\' || b >= utf8.RuneSelf {
			return -1, false
		}
	}
	for i, n := range names {
		if string(k) == n {
			return i, true
		}
	}
	for _, n := range names {
		if len(n) == len(k) && strings.EqualFold(n, string(k)) {
			return -1, false
		}
	}
	return -1, true
}

// cursor walks JSON already known to be valid.
type cursor struct {
	b  []byte
	i  int
	in *interner // nil: every string is a new copy
}

// interner hands out the short strings that repeat from line to line
// (types, the model, the session and message ids, a call's id in its
// result) without a new copy each time.
type interner struct {
	recent [8]string
	next   int
}

// maxInterned: longer strings (texts) are copied, not looked up.
const maxInterned = 64

func (t *interner) str(b []byte) string {
	switch string(b) { // no allocation: the constants are returned
	case "assistant":
		return "assistant"
	case "user":
		return "user"
	case "text":
		return "text"
	case "tool_use":
		return "tool_use"
	case "tool_result":
		return "tool_result"
	case "thinking":
		return "thinking"
	case "":
		return ""
	}
	if t == nil || len(b) > maxInterned {
		return string(b)
	}
	for _, s := range t.recent {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	t.recent[t.next] = s
	t.next = (t.next + 1) % len(t.recent)
	return s
}

func (c *cursor) ws() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *cursor) peek() byte {
	c.ws()
	if c.i < len(c.b) {
		return c.b[c.i]
	}
	return 0
}

// object calls member for each key, with the cursor at the value, which
// member must consume; false when the value is not an object or member
// gives up.
func (c *cursor) object(member func(key []byte) bool) bool {
	if c.peek() != '{' {
		return false
	}
	c.i++
	if c.peek() == '}' {
		c.i++
		return true
	}
	for {
		c.ws()
		key := c.str()
		c.ws()
		c.i++ // ':'
		c.ws()
		if !member(key) {
			return false
		}
		if c.peek() == ',' {
			c.i++
			continue
		}
		c.i++ // '}'
		return true
	}
}

// str returns the string literal at the cursor, quotes included.
func (c *cursor) str() []byte {
	start := c.i
	c.i++
	for {
		j := bytes.IndexByte(c.b[c.i:], '"')
		if j < 0 {
			c.i = len(c.b)
			return c.b[start:]
		}
		c.i += j + 1
		// the quote ends the string unless an odd run of backslashes escapes it
		n := 0
		for k := c.i - 2; k > start && c.b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return c.b[start:c.i]
		}
	}
}

// plain decodes the string literal at the cursor: its own bytes when it
// has no escape and is valid UTF-8, else as the struct decoder decodes it.
func (c *cursor) plain() (string, bool) {
	if c.peek() != '"' {
		return "", false
	}
	lit := c.str()
	in := lit[1 : len(lit)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return c.in.str(in), true
	}
	var s string
	return s, fastjson.Unmarshal(lit, &s) == nil
}

// blocks reads content blocks (an array of objects) as
// fastjson.Unmarshal reads them into []block, appending them to out[:0];
// copyRaw copies input and content (else they alias c.b, as with
// DontCopyRawMessage). false: the general decoder must do it.
func (c *cursor) blocks(out []block, copyRaw bool) ([]block, bool) {
	if c.peek() != '[' {
		return nil, false
	}
	c.i++
	out = out[:0]
	if c.peek() == ']' {
		c.i++
		return out, true
	}
	for {
		var b block
		if !c.block(&b, copyRaw) {
			return nil, false
		}
		out = append(out, b)
		switch c.peek() {
		case ',':
			c.i++
		case ']':
			c.i++
			return out, true
		default:
			return nil, false
		}
	}
}

func (c *cursor) block(b *block, copyRaw bool) bool {
	var seen [9]bool
	return c.object(func(key []byte) bool {
		f, ok := field(key, "type", "text", "thinking", "id", "name", "tool_use_id", "input", "content", "is_error")
		switch {
		case !ok:
			return false
		case f < 0:
			c.skip()
			return true
		case seen[f]:
			return false
		}
		seen[f] = true
		switch {
		case f < 6:
			s, ok := c.plain()
			*[]*string{&b.Type, &b.Text, &b.Thinking, &b.ID, &b.Name, &b.ToolUseID}[f] = s
			return ok
		case f < 8:
			start := c.i
			c.skip()
			raw := c.b[start:c.i]
			if copyRaw {
				raw = bytes.Clone(raw)
			}
			*[]*json.RawMessage{&b.Input, &b.Content}[f-6] = raw
			return true
		}
		switch {
		case bytes.HasPrefix(c.b[c.i:], []byte("true")):
			b.IsError, c.i = true, c.i+4
		case bytes.HasPrefix(c.b[c.i:], []byte("false")):
			b.IsError, c.i = false, c.i+5
		default:
			return false
		}
		return true
	})
}

// integer reads a plain integer that fits an int.
func (c *cursor) integer() (int, bool) {
	c.ws()
	start := c.i
	for c.i < len(c.b) && (c.b[c.i] == '-' || c.b[c.i] >= '0' && c.b[c.i] <= '9') {
		c.i++
	}
	if c.i < len(c.b) && (c.b[c.i] == '.' || c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		return 0, false
	}
	n, err := strconv.Atoi(string(c.b[start:c.i]))
	return n, err == nil && c.i-start <= 18
}

// skip passes over one value.
func (c *cursor) skip() {
	switch c.peek() {
	case '"':
		c.str()
	case '{', '[':
		depth := 0
		for c.i < len(c.b) {
			switch c.b[c.i] {
			case '"':
				c.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					c.i++
					return
				}
			}
			c.i++
		}
	default: // number, true, false, null
		for c.i < len(c.b) {
			switch c.b[c.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			c.i++
		}
	}
}
