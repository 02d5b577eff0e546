package record

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/render/redactjson"
)

// Meta names the run every event belongs to.
type Meta struct {
	RunID, SessionID, TaskID string // TaskID is the jobid
}

// Recorder appends to a run directory's events.jsonl and logs. It is safe
// for concurrent use. Each record is one write(2) of one line to a file
// opened O_APPEND, with no buffering in between: a crash loses at most the
// line being written, and Open drops such a torn line.
type Recorder struct {
	dir  string
	meta Meta
	now  func() time.Time

	mu     sync.Mutex
	seq    int64
	events localfs.File
	tools  localfs.File
	errs   localfs.File
	err    error // sticky: after a failed write the record is not trusted
	closed bool
	// continued: events.jsonl already held events when opened
	continued bool
}

// ErrClosed is returned by a Recorder used after Close.
var ErrClosed = errors.New("record: recorder is closed")

// Open creates dir (and dir/logs) and opens the record. An existing
// events.jsonl is continued: its sequence goes on, a torn last line is cut
// off (and a record.recovered warning says so). now nil means time.Now.
func Open(dir string, m Meta, now func() time.Time) (*Recorder, error) {
	return OpenFS(localfs.OS{}, dir, m, now)
}

// OpenFS is Open writing through fsys (the agent stage injects local
// failures in tests: a full disk, a read-only run directory).
func OpenFS(fsys localfs.FS, dir string, m Meta, now func() time.Time) (*Recorder, error) {
	fsys = localfs.Or(fsys)
	if m.RunID == "" || m.SessionID == "" || m.TaskID == "" {
		return nil, fmt.Errorf("record: open %s: run id, session id and task id are all required", dir)
	}
	if now == nil {
		now = time.Now
	}
	if err := fsys.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("record: create run dir: %w", err)
	}
	r := &Recorder{dir: dir, meta: m, now: now}
	path := filepath.Join(dir, contract.EventsFile)
	torn, err := r.resume(path)
	if err != nil {
		return nil, err
	}
	open := func(name string) (localfs.File, error) {
		f, err := fsys.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("record: open %s: %w", name, err)
		}
		return f, nil
	}
	if r.events, err = open(contract.EventsFile); err != nil {
		return nil, err
	}
	if r.tools, err = open(contract.ToolsFile); err != nil {
		r.events.Close()
		return nil, err
	}
	if r.errs, err = open(contract.ErrorsFile); err != nil {
		r.events.Close()
		r.tools.Close()
		return nil, err
	}
	if torn != nil {
		if _, err := r.Emit(contract.EventRecordRecovered, "runner", SeverityWarning,
			"events.jsonl "+torn.String(), map[string]any{"line": torn.Line, "bytes": torn.Bytes}); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// ErrNoRecord means a run directory has no events to continue.
var ErrNoRecord = errors.New("record: no events.jsonl to continue")

// Resume continues the record in dir under the run, session and task its
// events already name: how a later job (publish) appends to the record
// the earlier jobs wrote.
func Resume(dir string, now func() time.Time) (*Recorder, error) {
	evs, _, err := ScanEvents(filepath.Join(dir, contract.EventsFile))
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(evs) == 0) {
		return nil, fmt.Errorf("%w in %s", ErrNoRecord, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("record: resume %s: %w", dir, err)
	}
	last := evs[len(evs)-1]
	return Open(dir, Meta{RunID: last.RunID, SessionID: last.SessionID, TaskID: last.TaskID}, now)
}

// Continued reports whether Open found events already written (by an
// earlier job of the run).
func (r *Recorder) Continued() bool { return r.continued }

// resume reads an existing events.jsonl: continues its sequence, cuts a
// torn tail and ends a last line that lacks its newline.
func (r *Recorder) resume(path string) (*TornLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("record: read %s: %w", path, err)
	}
	evs, torn, good, err := parseEvents(data)
	if err != nil {
		return nil, fmt.Errorf("record: cannot continue %s: %w", path, err)
	}
	if len(evs) > 0 {
		last := evs[len(evs)-1]
		if last.RunID != r.meta.RunID {
			return nil, fmt.Errorf("record: %s belongs to run %q, not %q", path, last.RunID, r.meta.RunID)
		}
		r.seq = last.Sequence
		r.continued = true
	}
	if torn != nil {
		if err := os.Truncate(path, int64(good)); err != nil {
			return nil, fmt.Errorf("record: drop torn line of %s: %w", path, err)
		}
		data = data[:good]
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		if err := appendLine(path, nil); err != nil {
			return nil, err
		}
	}
	return torn, nil
}

func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("record: open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	return nil
}

// Opt sets an optional event field.
type Opt func(*Event)

// Correlation ties the event to a tool call id.
func Correlation(id string) Opt { return func(e *Event) { e.CorrelationID = id } }

// Parent names the event this one follows from.
func Parent(eventID string) Opt { return func(e *Event) { e.ParentEventID = eventID } }

// Emit appends one event and returns its id. data must encode as a JSON
// object (nil means {}).
func (r *Recorder) Emit(typ, actor, severity, summary string, data any, opts ...Opt) (string, error) {
	switch {
	case !typeRE.MatchString(typ):
		return "", fmt.Errorf("record: event type %q is not dotted lower-case words", typ)
	case actor == "":
		return "", fmt.Errorf("record: event %s: actor is empty", typ)
	case !validSeverity(severity):
		return "", fmt.Errorf("record: event %s: severity %q is not debug, info, warning or error", typ, severity)
	case summary == "":
		return "", fmt.Errorf("record: event %s: summary is empty", typ)
	}
	raw := json.RawMessage("{}")
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return "", fmt.Errorf("record: event %s: encode data: %w", typ, err)
		}
		if len(b) == 0 || b[0] != '{' {
			return "", fmt.Errorf("record: event %s: data must be a JSON object, got %.20s", typ, b)
		}
		raw = b
	}
	id, err := newEventID()
	if err != nil {
		return "", err
	}
	e := Event{
		EventID: id, RunID: r.meta.RunID, SessionID: r.meta.SessionID, TaskID: r.meta.TaskID,
		Type: typ, Actor: actor, Severity: severity, Summary: summary, Data: raw,
	}
	for _, o := range opts {
		o(&e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.usable(); err != nil {
		return "", err
	}
	e.Sequence = r.seq + 1
	e.Timestamp = r.now().UTC().Format(TimeFormat)
	if err := r.write(r.events, contract.EventsFile, e); err != nil {
		return "", err
	}
	r.seq = e.Sequence
	return e.EventID, nil
}

func (r *Recorder) usable() error {
	if r.closed {
		return ErrClosed
	}
	return r.err
}

// write redacts v and appends it as one line with a single write. A failed
// write may have left part of a line, so the recorder stops writing.
func (r *Recorder) write(f localfs.File, name string, v any) error {
	line, err := redactjson.Marshal(v)
	if err != nil {
		return fmt.Errorf("record: encode %s line: %w", name, err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		r.err = fmt.Errorf("record: write %s: %w", name, err)
		return r.err
	}
	return nil
}

func newEventID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("record: event id: %w", err)
	}
	return "evt_" + hex.EncodeToString(b[:]), nil
}

// Close syncs and closes the files.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for i, f := range []localfs.File{r.events, r.tools, r.errs} {
		name := []string{contract.EventsFile, contract.ToolsFile, contract.ErrorsFile}[i]
		if s, ok := f.(interface{ Sync() error }); ok {
			if err := s.Sync(); err != nil {
				errs = append(errs, fmt.Errorf("record: sync %s: %w", name, err))
			}
		}
		if err := f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("record: close %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// redactString is used for free text written outside JSON.
var redactString = redact.String

// SessionID is a run's session id (core-types "sess_…"). It is derived
// from the job and the run, so the three jobs of one run (assemble, agent,
// publish) write their events under the same session without passing it on.
func SessionID(jobID, runID string) string {
	return "sess_" + uuid.NewSHA1(uuid.NameSpaceURL, []byte("mention-runner:"+jobID+":"+runID)).String()
}
