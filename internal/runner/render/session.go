package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	fastjson "github.com/segmentio/encoding/json"
	"slices"
	"strings"
	"unsafe"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/render/redactjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Limits of the session markdown.
const (
	// DefaultMaxResultChars is where a tool result (or call arguments) is cut.
	DefaultMaxResultChars = 4000
	// DefaultMaxPartBytes leaves room under contract.GitHubBodyChars.
	DefaultMaxPartBytes = 65000
	minPartBytes        = 512
	// headingReserve is room for the longest heading a part can get.
	headingReserve = len("## Session (part 99999 of 99999)\n\n")
)

// SessionOptions tune SessionMarkdown; zero values mean the defaults.
type SessionOptions struct {
	// MaxResultChars cuts tool results and call arguments longer than this
	// many characters, with a note.
	MaxResultChars int
	// MaxPartBytes bounds each part, heading included (at most 65,535).
	MaxPartBytes int
}

func (o SessionOptions) withDefaults() SessionOptions {
	if o.MaxResultChars <= 0 {
		o.MaxResultChars = DefaultMaxResultChars
	}
	switch {
	case o.MaxPartBytes <= 0:
		o.MaxPartBytes = DefaultMaxPartBytes
	case o.MaxPartBytes >= contract.GitHubBodyChars:
		o.MaxPartBytes = contract.GitHubBodyChars - 1
	case o.MaxPartBytes < minPartBytes:
		o.MaxPartBytes = minPartBytes
	}
	return o
}

// CutNote is the line that follows anything cut short.
func CutNote(n int) string {
	return fmt.Sprintf("… cut %d characters; the full record is in the run artifact", n)
}

const noMessages = "(no messages)\n"

// SessionMarkdown renders the session in the SPEC §6 format as one or more
// comment bodies, each under GitHub's limit. Turns are never split unless
// one alone is too big: then it is split between its text and tool-call
// blocks, and a block too big on its own is cut with a note.
//
// Layout decisions: a user turn is followed directly by the reply, and every
// other turn ends with a `---` line; thinking is folded in <details>;
// system notices (the engine's result, hooks, retries) are [System] turns;
// call arguments are pretty-printed JSON in a ```json fence,
// a result that is a JSON object or array likewise, any other result is
// shown as text in a ```text fence; fences are longer than any backtick run
// in their content.
func SessionMarkdown(s session.Session, o SessionOptions) []string {
	o = o.withDefaults()
	r := turnRenderer{o: o}
	var units []unit
	for _, t := range s.Turns {
		if u := r.unit(t); len(u.pieces) > 0 {
			units = append(units, u)
		}
	}
	if len(units) == 0 {
		return []string{"## Session\n\n" + noMessages}
	}
	parts := pack(units, o.MaxPartBytes-headingReserve)
	out := make([]string, len(parts))
	for i, p := range parts {
		h := "## Session"
		if len(parts) > 1 {
			h = fmt.Sprintf("## Session (part %d of %d)", i+1, len(parts))
		}
		out[i] = h + "\n\n" + strings.Join(p, "\n")
	}
	return out
}

// SessionTurns renders the turns without heading or parts (for transcript.md).
func SessionTurns(s session.Session, o SessionOptions) string {
	r := turnRenderer{o: o.withDefaults()}
	var b strings.Builder
	for _, t := range s.Turns {
		u := r.unit(t)
		for _, p := range u.pieces {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p)
		}
	}
	if b.Len() == 0 {
		return noMessages
	}
	return b.String()
}

// unit is one rendered turn: pieces (label+text, or one tool call) that each
// end with a newline and are joined by blank lines.
type unit struct {
	pieces []string
	label  string // the turn's label; a continuation part starts with label+" (continued)"
}

func (u unit) size() int {
	n := 0
	for _, p := range u.pieces {
		n += len(p) + 1
	}
	return n - 1
}

// turnRenderer renders turns; preCut says how many characters of a call's
// arguments or result were already dropped before rendering (streaming).
type turnRenderer struct {
	o      SessionOptions
	preCut map[string]cutCounts
	// arena, when set, holds the tool calls' markdown of the turn being
	// written (the stream's writer empties it before each turn, once the
	// last turn's pieces are written): one buffer instead of one per call.
	arena *[]byte
}

type cutCounts struct{ args, result int }

func label(t session.TurnProjection) string {
	switch {
	case t.Kind == "compaction" || t.Role == "system":
		return "[System]"
	case t.Role == "user":
		return "[User]"
	case t.Role == "assistant":
		return "[Assistant]"
	default:
		return "[" + oneLine(escapeHTML(t.Role)) + "]"
	}
}

// turnParts is a rendered turn before it is joined into pieces: its label
// and its items (a text, a thinking block, a tool call). A text item is
// followed by a newline that is not stored, so the text is not copied.
type turnParts struct {
	label  string
	items  []string
	isText []bool
	rule   bool // the turn ends with a "---" line (all but user turns)
}

// item is the i-th item as its piece holds it.
func (p turnParts) item(i int) string {
	if p.isText[i] {
		return p.items[i] + "\n"
	}
	return p.items[i]
}

func (r turnRenderer) unit(t session.TurnProjection) unit {
	p, ok := r.parts(t)
	if !ok {
		return unit{}
	}
	u := unit{label: p.label}
	first := 0
	if p.isText[0] {
		u.pieces = append(u.pieces, p.label+"\n"+p.item(0))
		first = 1
	} else {
		u.pieces = append(u.pieces, p.label+"\n")
	}
	for i := first; i < len(p.items); i++ {
		u.pieces = append(u.pieces, p.item(i))
	}
	if p.rule {
		u.pieces[len(u.pieces)-1] += "\n---\n"
	}
	// every field that went in was redacted on its own; redacting whole
	// pieces again would cost a full scan per piece for nothing
	return u
}

// parts renders the items of a turn; false when it shows nothing.
func (r turnRenderer) parts(t session.TurnProjection) (turnParts, bool) {
	n := len(t.Blocks) + len(t.ToolCalls)
	content, isText := make([]string, 0, n), make([]bool, 0, n)
	// calls by id (the last of a repeated id, as a map would keep) and the
	// ids already shown: a turn holds a few calls, so slices beat maps
	var seen []string
	call := func(id string) (int, bool) {
		for i := len(t.ToolCalls) - 1; i >= 0; i-- {
			if t.ToolCalls[i].ID == id {
				return i, true
			}
		}
		return 0, false
	}
	for _, b := range t.Blocks {
		switch b.Type {
		case "text", "system_notification":
			s, _ := b.Content.(string)
			s = strings.Trim(balance(redact.String(s)), "\n")
			if strings.TrimSpace(s) == "" {
				continue
			}
			content = append(content, s) // + "\n" (isText)
			isText = append(isText, true)
		case "thinking":
			s, _ := b.Content.(string)
			if strings.TrimSpace(s) == "" {
				continue
			}
			content = append(content, r.thinking(s))
			isText = append(isText, false)
		case "tool_use":
			if b.ToolCallID == nil || slices.Contains(seen, *b.ToolCallID) {
				continue
			}
			if i, ok := call(*b.ToolCallID); ok {
				seen = append(seen, *b.ToolCallID)
				content = append(content, r.toolCall(t.ToolCalls[i]))
				isText = append(isText, false)
			}
		}
	}
	for _, c := range t.ToolCalls {
		if !slices.Contains(seen, c.ID) {
			content = append(content, r.toolCall(c))
			isText = append(isText, false)
		}
	}
	if t.Kind == "compaction" && len(content) == 0 {
		content, isText = []string{"(earlier context was compacted)"}, []bool{true}
	}
	if len(content) == 0 {
		return turnParts{}, false
	}
	return turnParts{label: label(t), items: content, isText: isText, rule: t.Role != "user"}, true
}

// thinking is a thinking block, folded: a reader opens it when needed.
func (r turnRenderer) thinking(s string) string {
	kept, cut := redactCut(strings.Trim(s, "\n"), r.o.MaxResultChars)
	out := "<details>\n<summary>Thinking</summary>\n\n" + fenced("text", kept)
	if cut > 0 {
		out += CutNote(cut) + "\n"
	}
	return out + "\n</details>\n"
}

// Outcome words in a tool call's summary line.
func outcome(status string) string {
	switch status {
	case session.ToolDone:
		return "success"
	case session.ToolError:
		return "failed"
	case session.ToolCancelled:
		return "cancelled"
	default:
		return "no result"
	}
}

func (r turnRenderer) toolCall(c session.ToolCallProjection) string {
	pre := r.preCut[c.ID]
	name := c.ToolName
	if c.DisplayName != "" {
		name = c.DisplayName
	}
	res, _ := c.Result.(string)
	size := 2*len(c.Arguments) + min(len(res), 2*r.o.MaxResultChars) + 512
	var b appender
	if r.arena != nil {
		b.buf = *r.arena
		defer func() { *r.arena = b.buf }()
	}
	b.buf = slices.Grow(b.buf, size) // one allocation, mostly
	start := len(b.buf)
	b.WriteString("<details>\n<summary>[ToolCall] ")
	b.WriteString(escapeHTML(oneLine(redact.String(name))))
	b.addByte('(')
	// The arguments are parsed and redacted once; the summary line, the
	// fenced copy and its indentation all work from that compact form.
	redArgs, argsErr := redactjson.String(c.Arguments)
	if argsErr != nil {
		redArgs = nil
		b.WriteString(escapeHTML(shortArgs(redact.String(c.Arguments), pre.args > 0)))
	} else {
		b.WriteString(escapeHTML(shortCompact(string(redArgs), pre.args > 0)))
	}
	b.WriteString(") — ")
	b.WriteString(outcome(c.Status))
	b.WriteString("</summary>\n\nTool Call:\n")
	b.WriteString(payloadRedacted(c.Arguments, redArgs, r.o.MaxResultChars, pre.args))
	b.WriteString("\nTool Result:\n")
	switch {
	case c.Status == session.ToolPending || c.Result == nil:
		b.WriteString("(no result)\n")
	default:
		var s string
		if str, ok := c.Result.(string); ok {
			s = str
		} else if raw, err := json.Marshal(c.Result); err == nil {
			s = string(raw)
		} else {
			s = fmt.Sprint(c.Result)
		}
		b.WriteString(payload(s, r.o.MaxResultChars, pre.result))
	}
	b.WriteString("\n</details>\n")
	// b.buf[start:] is never written again until the arena is emptied
	return unsafe.String(unsafe.SliceData(b.buf[start:]), len(b.buf)-start)
}

// appender is the part of strings.Builder toolCall uses, on a buffer it
// may share (the arena).
type appender struct{ buf []byte }

func (a *appender) WriteString(s string) { a.buf = append(a.buf, s...) }
func (a *appender) addByte(c byte)       { a.buf = append(a.buf, c) }

// payload renders a call's arguments or a result: a JSON object or array
// pretty-printed in a json fence, anything else as text; redacted first,
// then cut to limit characters with a note (preCut: already dropped).
func payload(s string, limit, preCut int) string {
	return payloadRedacted(s, nil, limit, preCut)
}

// payloadRedacted is payload for s whose redactjson form is already known
// (red, nil when s is not JSON or it was not computed).
func payloadRedacted(s string, red []byte, limit, preCut int) string {
	lang := "text"
	t := strings.TrimSpace(s)
	if preCut == 0 && len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var err error
		if red == nil {
			red, err = redactjson.String(t)
		}
		if err == nil {
			s, lang = string(indentCompact(red)), "json"
		}
	}
	var cut int
	if lang == "text" {
		s, cut = redactCut(s, limit)
	} else {
		s, cut = cutRunes(s, limit)
	}
	cut += preCut
	out := fenced(lang, s)
	if cut > 0 {
		out += CutNote(cut) + "\n"
	}
	return out
}

// redactMargin is how far past a cut text is still redacted, so a secret
// that straddles the cut is recognised whole.
const redactMargin = 1024

// redactCut redacts s and keeps limit characters of it, scanning only
// what is kept (plus a margin). The count removed is of the original text.
func redactCut(s string, limit int) (string, int) {
	head, cut := cutRunes(s, limit+redactMargin)
	if cut == 0 {
		return cutRunes(redact.String(s), limit)
	}
	kept, n := cutRunes(redact.String(head), limit)
	return kept, cut + n
}

// maxShortArgs is how many characters of arguments the summary line shows.
const maxShortArgs = 80

// shortArgs is the one-line argument list of a summary: an object's fields
// as key=value (values as compact JSON, in the order written), anything
// else compact, cut at maxShortArgs characters.
func shortArgs(args string, cut bool) string {
	s := strings.TrimSpace(args)
	if !cut {
		if kv, ok := objectFields(s); ok {
			s = kv
		} else if fastjson.Valid([]byte(s)) {
			var c bytes.Buffer
			if json.Compact(&c, []byte(s)) == nil {
				s = c.String()
			}
		}
	}
	s = oneLine(s)
	if short, n := cutRunes(s, maxShortArgs); n > 0 || cut {
		return short + "…"
	}
	return s
}

// shortCompact is shortArgs for args that are already compact JSON (the
// redacted arguments): the same line, without validating or compacting
// them again.
func shortCompact(args string, cut bool) string {
	s := args
	if !cut {
		if kv, ok := compactFields(s); ok {
			s = kv
		}
	}
	s = oneLine(s)
	if short, n := cutRunes(s, maxShortArgs); n > 0 || cut {
		return short + "…"
	}
	return s
}

// compactFields is objectFields for a compact JSON value: one walk over
// the top-level members, no decoder.
func compactFields(s string) (string, bool) {
	if !strings.HasPrefix(s, "{") {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s) && s[i] != '}'; {
		kEnd := skipCompact(s, i)
		key := s[i+1 : kEnd-1]
		if strings.IndexByte(key, '\\') >= 0 {
			if json.Unmarshal([]byte(s[i:kEnd]), &key) != nil {
				return "", false
			}
		}
		vEnd := skipCompact(s, kEnd+1) // past the ':'
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(s[kEnd+1 : vEnd])
		if b.Len() > 4*maxShortArgs {
			break // the rest would be cut anyway
		}
		i = vEnd
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	return b.String(), true
}

// skipCompact returns the index just past the value that starts at s[i]
// in compact, valid JSON.
func skipCompact(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j // a scalar ends at its container's end
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',', ':':
			if depth == 0 {
				return j
			}
		}
	}
	return len(s)
}

// indentCompact is json.Indent(dst, compact, "", "  ") for compact, valid
// JSON, without re-scanning it: strings are copied whole, an empty object
// or array stays {} or [].
func indentCompact(compact []byte) []byte {
	out := make([]byte, 0, len(compact)+len(compact)/2)
	newline := func(depth int) {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	depth, needIndent := 0, false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline(depth)
		}
		switch c {
		case '"':
			j := i + 1
			for ; j < len(compact) && compact[j] != '"'; j++ {
				if compact[j] == '\\' {
					j++
				}
			}
			out = append(out, compact[i:min(j+1, len(compact))]...)
			i = j
		case '{', '[':
			needIndent = true
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline(depth)
		case ':':
			out = append(out, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline(depth)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// objectFields renders a JSON object as `k=v, k=v`, keeping field order.
func objectFields(s string) (string, bool) {
	if !strings.HasPrefix(s, "{") || !fastjson.Valid([]byte(s)) {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return "", false
	}
	var b strings.Builder
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return "", false
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%v=%s", k, c.String())
		if b.Len() > 4*maxShortArgs {
			break // the rest would be cut anyway
		}
	}
	return b.String(), true
}
