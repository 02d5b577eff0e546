package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// ToolRecord is one line of logs/tools.jsonl: one tool call.
type ToolRecord struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Arguments     json.RawMessage `json:"arguments"`
	Status        string          `json:"status"` // pending | done | error | cancelled
	ResultExcerpt string          `json:"result_excerpt"`
	DurationMS    *int64          `json:"duration_ms"`
}

// ErrorRecord is one line of logs/errors.jsonl.
type ErrorRecord struct {
	Timestamp   string          `json:"timestamp"`
	Kind        string          `json:"kind"`
	Message     string          `json:"message"`
	Recoverable bool            `json:"recoverable"`
	Data        json.RawMessage `json:"data"`
}

// ExcerptChars is how much of a tool result tools.jsonl keeps.
const ExcerptChars = 2000

// Excerpt keeps the first ExcerptChars characters of a result, redacted.
func Excerpt(s string) string { return firstRunes(s, ExcerptChars) }

// firstRunes keeps n characters of s, redacted; it redacts a margin past
// the cut so a secret straddling it is recognised whole, and never scans
// (or copies) the rest of a huge string.
func firstRunes(s string, n int) string {
	head, cut := prefixRunes(s, n+1024)
	head = redactString(head)
	if kept, more := prefixRunes(head, n); more || cut {
		return kept + "…"
	}
	return head
}

// prefixRunes is the first n characters of s and whether more followed.
func prefixRunes(s string, n int) (string, bool) {
	i := 0
	for count := 0; i < len(s) && count < n; count++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], i < len(s)
}

func validToolStatus(s string) bool {
	switch s {
	case "pending", "done", "error", "cancelled":
		return true
	}
	return false
}

// Tool appends a tool call record.
func (r *Recorder) Tool(rec ToolRecord) error {
	if rec.ID == "" || rec.Name == "" {
		return fmt.Errorf("record: tool record needs an id and a name (got %q, %q)", rec.ID, rec.Name)
	}
	if !validToolStatus(rec.Status) {
		return fmt.Errorf("record: tool %s: status %q is not pending, done, error or cancelled", rec.ID, rec.Status)
	}
	rec.Arguments = jsonOrString(rec.Arguments)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.usable(); err != nil {
		return err
	}
	return r.write(r.tools, contract.ToolsFile, rec)
}

// Error appends an error record and emits an `error` event for it
// (severity warning when recoverable).
func (r *Recorder) Error(rec ErrorRecord) error {
	if rec.Kind == "" || rec.Message == "" {
		return fmt.Errorf("record: error record needs a kind and a message")
	}
	if len(rec.Data) == 0 {
		rec.Data = json.RawMessage("{}")
	} else if !json.Valid(rec.Data) || rec.Data[0] != '{' {
		return fmt.Errorf("record: error %s: data must be a JSON object", rec.Kind)
	}
	r.mu.Lock()
	if rec.Timestamp == "" {
		rec.Timestamp = r.now().UTC().Format(TimeFormat)
	}
	err := r.usable()
	if err == nil {
		err = r.write(r.errs, contract.ErrorsFile, rec)
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	sev := SeverityError
	if rec.Recoverable {
		sev = SeverityWarning
	}
	_, err = r.Emit(contract.EventError, "runner", sev, rec.Kind+": "+rec.Message,
		map[string]any{"kind": rec.Kind, "recoverable": rec.Recoverable, "data": rec.Data})
	return err
}

// jsonOrString keeps valid JSON and turns anything else into a JSON string.
func jsonOrString(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}

// ReadTools reads logs/tools.jsonl (a missing file is empty).
func ReadTools(path string) ([]ToolRecord, *TornLine, error) {
	return readJSONL[ToolRecord](path, contract.ToolsFile)
}

// ReadErrors reads logs/errors.jsonl (a missing file is empty).
func ReadErrors(path string) ([]ErrorRecord, *TornLine, error) {
	return readJSONL[ErrorRecord](path, contract.ErrorsFile)
}

func readJSONL[T any](path, name string) ([]T, *TornLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	var out []T
	torn, _, err := eachLine(name, data, func(line []byte) error {
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, torn, err
}
