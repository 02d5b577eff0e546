package streamjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	fastjson "github.com/segmentio/encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// line is the envelope of every stream-json line; fields are filled per type.
type line struct {
	Type    *string `json:"type"` // a pointer, as checkLine reads it: null is no type
	Subtype string  `json:"subtype"`

	// system/init
	SessionID  string   `json:"session_id"`
	Model      string   `json:"model"`
	CWD        string   `json:"cwd"`
	Tools      []string `json:"tools"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`

	// assistant, user
	Message *message `json:"message"`
	// walked: filled by messageLine from a line checked valid, so its
	// content can be walked the same way
	walked bool

	// assistant: set on messages the engine made up for an API error
	Error string `json:"error"`

	// result
	IsError           bool     `json:"is_error"`
	NumTurns          int      `json:"num_turns"`
	DurationMS        int64    `json:"duration_ms"`
	TotalCostUSD      *float64 `json:"total_cost_usd"`
	Result            string   `json:"result"`
	Errors            []string `json:"errors"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
	Usage      *usage `json:"usage"`
	ModelUsage map[string]struct {
		ContextWindow int `json:"contextWindow"`
	} `json:"modelUsage"`
}

type message struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Usage   *usage          `json:"usage"`
	Content json.RawMessage `json:"content"`
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// generalOnly turns the one-parse paths off: the differential fuzz target
// checks that they give exactly what the general path gives.
var generalOnly = false

// decodeLine appends the events of one line to out. The line is parsed
// once: message content stays a slice of raw (no copy) until the blocks
// are decoded from it. With strict, a line that is not a stream-json event
// is a *FormatError (checkLine words it).
func (d *Decoder) decodeLine(raw []byte, out []session.Event, strict bool) ([]session.Event, error) {
	now := d.now()
	unknown := func(note string) []session.Event {
		return append(out, session.Event{Kind: session.EventUnknown, Time: now, Raw: rawJSON(raw), Text: note})
	}
	l := &d.scratch
	*l = line{}
	var err error
	if generalOnly || !fastjson.Valid(raw) || !messageLine(raw, l, &d.msg, &d.in) {
		*l = line{}
		var rest []byte
		if rest, err = fastjson.Parse(raw, l, fastjson.DontCopyRawMessage); len(rest) != 0 && err == nil {
			err = errors.New("trailing data")
		}
	}
	if err != nil {
		// the rare bad line: worded exactly as Unmarshal words it
		if err = fastjson.Unmarshal(raw, new(line)); err == nil {
			err = errors.New("trailing data")
		}
	}
	if strict && (err != nil || l.Type == nil || !snakeWord(*l.Type)) {
		// the rare bad line is checked again on its own, so the error reads
		// as before and lines the struct cannot hold stay lenient
		if cerr := checkLine(raw); cerr != nil {
			return out, &FormatError{Line: d.line, Err: cerr}
		}
	}
	if err != nil {
		return unknown(fmt.Sprintf("stream-json line %d: malformed JSON: %v", d.line, err)), nil
	}
	typ := ""
	if l.Type != nil {
		typ = *l.Type
	}
	switch {
	case typ == "system" && l.Subtype == "init":
		init := &session.Init{SessionID: l.SessionID, Model: l.Model, Tools: l.Tools, CWD: l.CWD}
		for _, s := range l.MCPServers {
			init.MCPServers = append(init.MCPServers, session.MCPServer{Name: s.Name, Status: s.Status})
		}
		return append(out, session.Event{Kind: session.EventInit, Time: now, Model: l.Model, Init: init}), nil
	case typ == "assistant" && l.Message != nil:
		return d.assistant(*l, raw, now, out), nil
	case typ == "user" && l.Message != nil:
		return d.user(*l, raw, now, out), nil
	case typ == "result":
		r := &session.Result{Subtype: l.Subtype, IsError: l.IsError, NumTurns: l.NumTurns,
			DurationMS: l.DurationMS, TotalCostUSD: l.TotalCostUSD, Text: l.Result}
		if r.Text == "" && len(l.Errors) > 0 {
			r.Text = strings.Join(l.Errors, "\n") // error subtypes carry no result text
		}
		for _, p := range l.PermissionDenials {
			r.PermissionDenials = append(r.PermissionDenials, p.ToolName)
		}
		r.Errors = l.Errors
		if l.Usage != nil {
			r.Usage = &session.Usage{InputTokens: l.Usage.InputTokens, OutputTokens: l.Usage.OutputTokens}
		}
		for _, m := range l.ModelUsage {
			r.ContextWindow = max(r.ContextWindow, m.ContextWindow)
		}
		return append(out, session.Event{Kind: session.EventResult, Time: now, IsError: l.IsError, Result: r}), nil
	case typ == "system" && l.Subtype != "thinking_tokens":
		// hooks, API retries, compaction, status…: a notice a reader needs
		// (thinking_tokens only counts, and the thinking itself is kept)
		return append(out, session.Event{Kind: session.EventNotice, Time: now, Raw: rawJSON(raw), Text: systemNotice(l.Subtype, raw)}), nil
	}
	note := typ
	if l.Subtype != "" {
		note += "/" + l.Subtype
	}
	return unknown(note), nil
}

// assistant emits one event per content block. Claude Code writes one line
// per block, repeating the message's id and usage on each; consumers that
// sum usage must count it once per MessageID.
func (d *Decoder) assistant(l line, raw []byte, now time.Time, out []session.Event) []session.Event {
	m := l.Message
	var u *session.Usage
	if m.Usage != nil {
		u = &session.Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens}
	}
	// One parse of the content into blocks; a block of another type (kept
	// raw) or a content that does not fit sends the line down the general
	// path, block by block.
	fast := d.blocks
	defer func() { clear(fast); d.blocks = fast[:0] }()
	if !generalOnly && contentBlocks(l, &fast, false, &d.in) && len(fast) > 0 && knownTypes(fast, "text", "thinking", "tool_use") {
		if l.Error != "" {
			out = append(out, session.Event{Kind: session.EventNotice, Time: now, Text: "engine error: " + l.Error})
		}
		for _, b := range fast {
			out = append(out, assistantEvent(session.Event{Time: now, MessageID: m.ID, Model: m.Model, Usage: u}, b))
		}
		return out
	}
	var blocks []json.RawMessage
	if fastjson.Unmarshal(m.Content, &blocks) != nil || len(blocks) == 0 {
		return append(out, session.Event{Kind: session.EventUnknown, Time: now, Raw: rawJSON(raw),
			Text: "assistant message without content blocks"})
	}
	if l.Error != "" {
		// a message the engine wrote about its own failure (API errors)
		out = append(out, session.Event{Kind: session.EventNotice, Time: now, Text: "engine error: " + l.Error})
	}
	for _, rb := range blocks {
		ev := session.Event{Time: now, MessageID: m.ID, Model: m.Model, Usage: u}
		var b block
		if fastjson.Unmarshal(rb, &b) != nil {
			b.Type = ""
		}
		switch b.Type {
		case "text", "thinking", "tool_use":
			ev = assistantEvent(ev, b)
		default: // redacted_thinking, server tools…: kept raw
			ev.Kind, ev.Raw, ev.Text = session.EventUnknown, rawJSON(rb), "assistant block "+b.Type
		}
		out = append(out, ev)
	}
	return out
}

// assistantEvent fills ev from a text, thinking or tool_use block.
func assistantEvent(ev session.Event, b block) session.Event {
	switch b.Type {
	case "text":
		ev.Kind, ev.Text = session.EventText, b.Text
	case "thinking":
		ev.Kind, ev.Text = session.EventThinking, b.Thinking
	case "tool_use":
		ev.Kind, ev.ToolCallID, ev.ToolName, ev.Input = session.EventToolUse, b.ID, b.Name, b.Input
		if len(ev.Input) == 0 {
			ev.Input = json.RawMessage(`{}`)
		}
	}
	return ev
}

// knownTypes reports whether every block is of one of the types.
func knownTypes(bs []block, types ...string) bool {
	for _, b := range bs {
		if !slices.Contains(types, b.Type) {
			return false
		}
	}
	return true
}

// user emits tool results (and any plain text, e.g. replayed prompts).
func (d *Decoder) user(l line, raw []byte, now time.Time, out []session.Event) []session.Event {
	content := l.Message.Content
	var s string
	if (len(content) == 0 || content[0] != '[') && fastjson.Unmarshal(content, &s) == nil {
		return append(out, session.Event{Kind: session.EventUserText, Time: now, Text: s})
	}
	// as in assistant: one parse, the general path for anything else
	fast := d.blocks
	defer func() { clear(fast); d.blocks = fast[:0] }()
	if !generalOnly && contentBlocks(l, &fast, true, &d.in) && len(fast) > 0 && knownTypes(fast, "tool_result", "text") {
		for _, b := range fast {
			out = append(out, userEvent(now, b))
		}
		return out
	}
	var blocks []json.RawMessage
	if fastjson.Unmarshal(l.Message.Content, &blocks) != nil || len(blocks) == 0 {
		return append(out, session.Event{Kind: session.EventUnknown, Time: now, Raw: rawJSON(raw),
			Text: "user message without content blocks"})
	}
	for _, rb := range blocks {
		var b block
		if fastjson.Unmarshal(rb, &b) != nil {
			b.Type = ""
		}
		switch b.Type {
		case "tool_result", "text":
			out = append(out, userEvent(now, b))
		default:
			out = append(out, session.Event{Kind: session.EventUnknown, Time: now, Raw: rawJSON(rb),
				Text: "user block " + b.Type})
		}
	}
	return out
}

// userEvent is the event of a tool_result or text block.
func userEvent(now time.Time, b block) session.Event {
	if b.Type == "text" {
		return session.Event{Kind: session.EventUserText, Time: now, Text: b.Text}
	}
	return session.Event{Kind: session.EventToolResult, Time: now,
		ToolCallID: b.ToolUseID, Output: contentText(b.Content), IsError: b.IsError}
}

// contentBlocks decodes the message content into blocks in one parse
// (into *out's array): walked when the line was (aliasing the line when
// alias is set; short strings from in), else by the struct decoder
// (alias: DontCopyRawMessage).
func contentBlocks(l line, out *[]block, alias bool, in *interner) bool {
	if l.walked {
		c := cursor{b: l.Message.Content, in: in}
		if bs, ok := c.blocks(*out, !alias); ok && c.peek() == 0 {
			*out = bs
			return true
		}
	}
	*out = nil
	if alias {
		return parseExact(l.Message.Content, out, fastjson.DontCopyRawMessage)
	}
	return fastjson.Unmarshal(l.Message.Content, out) == nil
}

// parseExact is fastjson.Unmarshal with flags: false on any error or
// trailing bytes.
func parseExact(b []byte, v any, flags fastjson.ParseFlags) bool {
	rest, err := fastjson.Parse(b, v, flags)
	return err == nil && len(rest) == 0
}

// contentText flattens tool_result content: a string, or an array whose
// text parts are joined by newlines (other parts, e.g. images, are noted).
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if raw[0] != '[' && fastjson.Unmarshal(raw, &s) == nil { // an array is never a string
		return s
	}
	var parts []block
	if fastjson.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		} else {
			texts = append(texts, "["+p.Type+"]")
		}
	}
	return strings.Join(texts, "\n")
}

// rawJSON keeps a line as Raw: as is when it is JSON, else as a JSON string
// so the event still marshals.
func rawJSON(b []byte) json.RawMessage {
	if fastjson.Valid(b) {
		return append(json.RawMessage(nil), b...)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// noticeChars bounds a system notice's text.
const noticeChars = 600

// systemNotice is a one-paragraph account of a system line: its subtype,
// then its scalar fields as key=value in the order written (ids left out).
func systemNotice(subtype string, raw []byte) string {
	var b strings.Builder
	b.WriteString("system/" + subtype)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return b.String()
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		key, _ := k.(string)
		switch key {
		case "type", "subtype", "uuid", "session_id", "parent_tool_use_id":
			continue
		}
		var val any
		if json.Unmarshal(v, &val) != nil {
			continue
		}
		switch x := val.(type) {
		case string:
			if x != "" {
				fmt.Fprintf(&b, " %s=%q", key, x)
			}
		case float64, bool:
			fmt.Fprintf(&b, " %s=%v", key, x)
		}
		if b.Len() > noticeChars {
			break
		}
	}
	s := b.String()
	if r := []rune(s); len(r) > noticeChars {
		s = string(r[:noticeChars]) + "…"
	}
	return s
}
