// Package record is the run record (SPEC §5): events.jsonl, the canonical
// timeline; logs/tools.jsonl and logs/errors.jsonl; session.json; run.json
// (this package's run metadata); and transcript.md rebuilt from them. Every
// byte it writes has passed through redaction.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Severities of an event.
const (
	SeverityDebug   = "debug"
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// TimeFormat is the events' timestamp: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Event is one line of events.jsonl (SPEC §5).
type Event struct {
	EventID       string          `json:"event_id"`
	Sequence      int64           `json:"sequence"`
	RunID         string          `json:"run_id"`
	SessionID     string          `json:"session_id"`
	TaskID        string          `json:"task_id"`
	Type          string          `json:"type"`
	Timestamp     string          `json:"timestamp"`
	Actor         string          `json:"actor"`
	Severity      string          `json:"severity"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	ParentEventID string          `json:"parent_event_id,omitempty"`
	Summary       string          `json:"summary"`
	Data          json.RawMessage `json:"data"`
}

// Time parses the timestamp.
func (e Event) Time() (time.Time, error) { return time.Parse(time.RFC3339Nano, e.Timestamp) }

var (
	typeRE      = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
	requiredKey = []string{"event_id", "sequence", "run_id", "session_id", "task_id", "type", "timestamp", "actor", "severity", "summary", "data"}
)

func validSeverity(s string) bool {
	switch s {
	case SeverityDebug, SeverityInfo, SeverityWarning, SeverityError:
		return true
	}
	return false
}

// validate checks the fields SPEC §5 requires.
func (e Event) validate() error {
	switch {
	case !strings.HasPrefix(e.EventID, "evt_") || len(e.EventID) == 4:
		return fmt.Errorf("event_id %q does not start with evt_", e.EventID)
	case e.Sequence < 1:
		return fmt.Errorf("sequence %d is not positive", e.Sequence)
	case e.RunID == "" || e.SessionID == "" || e.TaskID == "":
		return errors.New("run_id, session_id and task_id must not be empty")
	case !typeRE.MatchString(e.Type):
		return fmt.Errorf("type %q is not dotted lower-case words", e.Type)
	case e.Actor == "":
		return errors.New("actor is empty")
	case !validSeverity(e.Severity):
		return fmt.Errorf("severity %q is not debug, info, warning or error", e.Severity)
	case e.Summary == "":
		return errors.New("summary is empty")
	case len(e.Data) == 0 || e.Data[0] != '{':
		return errors.New("data is not an object")
	}
	if _, err := e.Time(); err != nil {
		return fmt.Errorf("timestamp %q: %w", e.Timestamp, err)
	}
	return nil
}

// LineError says which line of a JSONL file is wrong.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s line %d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// TornLine is a last line cut short by a crash: it was dropped.
type TornLine struct {
	Line  int // 1-based
	Bytes int
}

func (t *TornLine) String() string {
	return fmt.Sprintf("line %d (%d bytes) was cut short by a crash and dropped", t.Line, t.Bytes)
}

// ReadEvents reads events.jsonl strictly: every line a complete event with
// every required field, sequence strictly increasing. A torn last line is
// tolerated (dropped); ScanEvents reports it.
func ReadEvents(path string) ([]Event, error) {
	evs, _, err := ScanEvents(path)
	return evs, err
}

// ScanEvents is ReadEvents that also reports a torn last line.
func ScanEvents(path string) ([]Event, *TornLine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read events: %w", err)
	}
	evs, torn, _, err := parseEvents(data)
	if err != nil {
		return evs, torn, fmt.Errorf("read events %s: %w", path, err)
	}
	return evs, torn, nil
}

// parseEvents also returns how many bytes hold whole lines (where to cut a
// torn tail).
func parseEvents(data []byte) ([]Event, *TornLine, int, error) {
	var out []Event
	var last int64
	torn, good, err := eachLine(contract.EventsFile, data, func(line []byte) error {
		e, err := parseEvent(line)
		if err != nil {
			return err
		}
		if e.Sequence <= last {
			return fmt.Errorf("sequence %d does not follow %d", e.Sequence, last)
		}
		last = e.Sequence
		out = append(out, e)
		return nil
	})
	return out, torn, good, err
}

func parseEvent(line []byte) (Event, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(line, &keys); err != nil {
		return Event{}, err
	}
	for _, k := range requiredKey {
		if _, ok := keys[k]; !ok {
			return Event{}, fmt.Errorf("missing required field %q", k)
		}
	}
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, err
	}
	e.Data = bytes.TrimSpace(e.Data)
	return e, e.validate()
}

// eachLine calls fn for every line of a JSONL file. Lines must be complete;
// only the last line, if it has no newline and is not whole JSON, is torn.
// It returns the torn line, if any, and the length of the whole lines.
func eachLine(file string, data []byte, fn func([]byte) error) (*TornLine, int, error) {
	n, off := 0, 0
	for off < len(data) {
		n++
		end := bytes.IndexByte(data[off:], '\n')
		last := end < 0
		if last {
			end = len(data) - off
		}
		line := data[off : off+end]
		if err := fn(line); err != nil {
			var syn *json.SyntaxError
			if last && errors.As(err, &syn) {
				return &TornLine{Line: n, Bytes: len(line)}, off, nil
			}
			return nil, off, &LineError{File: file, Line: n, Err: err}
		}
		off += end
		if !last {
			off++
		}
	}
	return nil, off, nil
}
