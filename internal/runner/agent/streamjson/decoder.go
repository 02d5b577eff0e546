// Package streamjson decodes Claude Code's `-p --output-format stream-json
// --verbose` output (one JSON object per line) into session.Events,
// incrementally: each Next reads one line, so memory is O(longest line).
//
// Mapping (checked against real output of Claude Code 2.1.197, see
// testdata/*.jsonl):
//
//	{type:system, subtype:init}          → EventInit
//	{type:assistant, message:{content}}  → one Event per block: text,
//	                                       thinking, tool_use
//	{type:user, message:{content}}       → EventToolResult per tool_result
//	                                       block, EventUserText per text
//	{type:result}                        → EventResult
//	anything else, malformed or too long → EventUnknown (never fatal)
//
// EventUnknown carries the line in Raw (a malformed line as a JSON string,
// so events always marshal) and a short note in Text ("system/hook_started",
// "malformed JSON…", "…skipped: N bytes…"). Time is arrival time.
package streamjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	fastjson "github.com/segmentio/encoding/json"
	"io"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// DefaultMaxLine is the longest line decoded; longer lines are skipped.
const DefaultMaxLine = 64 << 20

// Decoder reads stream-json events from a reader.
type Decoder struct {
	// MaxLine caps a line's size in bytes; a longer line is skipped and
	// reported as an EventUnknown. Zero means DefaultMaxLine.
	MaxLine int
	// Strict makes a line that is not a stream-json event (not a JSON
	// object with a lower_snake "type") an error, a *FormatError, instead
	// of an EventUnknown: for reading a file a person named, which may not
	// be a stream-json log at all. The engine's live stream is read leniently.
	Strict bool
	// Now stamps events with their arrival time (stream-json lines carry
	// none); nil means time.Now. Tests set a fixed clock.
	Now func() time.Time
	// Map turns one line into events; nil means Claude Code's stream-json.
	// Other engines' JSONL streams (Codex, Gemini CLI) plug in here and get
	// the same line handling: size cap, blank lines, read errors.
	Map LineMapper

	r       *bufio.Reader
	buf     []byte
	line    int
	pending []session.Event
	head    int   // pending[head:] are still to hand out
	err     error // sticky read error, returned once pending is drained

	// reused line after line (events copy what they keep out of them)
	scratch line
	msg     message
	blocks  []block
	in      interner
}

// LineMapper maps one JSONL line (its 1-based number, its arrival time)
// to events; it must never fail: bad input becomes an EventUnknown (see
// Unknown).
type LineMapper func(line []byte, n int, now time.Time) []session.Event

// Unknown is an EventUnknown keeping line raw, with a note.
func Unknown(line []byte, note string, now time.Time) session.Event {
	return session.Event{Kind: session.EventUnknown, Time: now, Raw: rawJSON(line), Text: note}
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, or io.EOF after the last one. Other errors
// come only from the underlying reader; bad input never is an error.
func (d *Decoder) Next() (session.Event, error) {
	for d.head >= len(d.pending) {
		d.pending, d.head = d.pending[:0], 0 // all handed out: reuse the array
		if d.err != nil {
			return session.Event{}, d.err
		}
		line, tooLong, err := d.readLine()
		d.err = d.readErr(err)
		if line == nil && tooLong == 0 {
			continue
		}
		d.line++
		var lerr error
		if d.pending, lerr = d.lineEvents(d.pending, line, tooLong); lerr != nil {
			d.err = lerr
		}
	}
	ev := d.pending[d.head]
	d.pending[d.head] = session.Event{}
	d.head++
	return ev, nil
}

// readErr words a read error of the line after d.line (io.EOF stays as is).
func (d *Decoder) readErr(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return fmt.Errorf("stream-json line %d: %w", d.line+1, err)
}

// lineEvents appends the events of line number d.line (or, when tooLong >
// 0, of a line skipped for its size) to out. An error is a *FormatError
// (Strict): the stream ends there.
func (d *Decoder) lineEvents(out []session.Event, line []byte, tooLong int) ([]session.Event, error) {
	if tooLong > 0 {
		return append(out, d.skipped(tooLong)), nil
	}
	if d.Map != nil {
		if d.Strict {
			if err := checkLine(line); err != nil {
				return out, &FormatError{Line: d.line, Err: err}
			}
		}
		return append(out, d.Map(line, d.line, d.now())...), nil
	}
	// Claude Code's lines are checked while they are decoded (one parse)
	return d.decodeLine(line, out, d.Strict)
}

// readLine returns the next non-empty line without its newline. A line
// over MaxLine is drained and reported by its size instead. On error the
// partial last line (if any) is still returned.
func (d *Decoder) readLine() (line []byte, tooLong int, err error) {
	max := d.maxLine()
	if cap(d.buf) > 1<<20 {
		d.buf = nil // don't pin one huge line's buffer for the rest of the stream
	}
	d.buf = d.buf[:0]
	size, over := 0, false
	for {
		chunk, rerr := d.r.ReadSlice('\n')
		size += len(chunk)
		if !over {
			d.buf = append(d.buf, chunk...)
			if len(bytes.TrimRight(d.buf, "\r\n")) > max {
				over, d.buf = true, d.buf[:0] // drain the rest, keep nothing
			}
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		err = rerr
		break
	}
	if over {
		return nil, size, err
	}
	line = bytes.TrimRight(d.buf, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, 0, err
	}
	return line, 0, err
}

func (d *Decoder) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Decoder) skipped(size int) session.Event {
	raw, _ := json.Marshal(map[string]any{"skipped": "line too long", "line": d.line, "bytes": size})
	return session.Event{Kind: session.EventUnknown, Time: d.now(), Raw: raw,
		Text: fmt.Sprintf("stream-json line %d skipped: %d bytes is over the %d-byte limit", d.line, size, d.maxLine())}
}

func (d *Decoder) maxLine() int {
	if d.MaxLine <= 0 {
		return DefaultMaxLine
	}
	return d.MaxLine
}

// FormatError is a line that is not a stream-json event (Strict decoding).
type FormatError struct {
	Line int // 1-based
	Err  error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("line %d is not a Claude Code stream-json event: %v", e.Line, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// checkLine accepts a JSON object whose "type" is a lower_snake word, as
// every stream-json line has; events.jsonl ("run.created"), markdown or
// other JSON fail.
func checkLine(line []byte) error {
	var head struct {
		Type *string `json:"type"`
	}
	if err := fastjson.Unmarshal(line, &head); err != nil {
		// Rare (the run ends): encoding/json words the problem, as before.
		if err = json.Unmarshal(line, &head); err == nil {
			err = errors.New("not JSON")
		}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return fmt.Errorf("not a JSON object (%s)", ute.Value)
		}
		return fmt.Errorf("not JSON: %q", excerpt(line))
	}
	if head.Type == nil {
		return errors.New(`no "type" field`)
	}
	if !snakeWord(*head.Type) {
		return fmt.Errorf("type %q is not a stream-json type", *head.Type)
	}
	return nil
}

func snakeWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

func excerpt(b []byte) string {
	const n = 60
	if r := []rune(string(b)); len(r) > n {
		return string(r[:n]) + "…"
	}
	return string(b)
}
