package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
)

// Decision values in the log. A denial is the policy working, not an
// error; "error" is the gate itself failing (e.g. a disk or git failure).
const (
	DecisionAllowed = "allowed"
	DecisionDenied  = "denied"
	DecisionInvalid = "invalid"
	DecisionError   = "error"
)

// Rules the gate adds to policy's for pull request capture and input.
const (
	RuleInvalidArgs    = "invalid-arguments"
	RuleNoCommits      = "no-commits"
	RuleUnknownBase    = "unknown-base"
	RuleBaseConflict   = "base-conflict"
	RuleWrongRepo      = "pr-wrong-repo"
	RuleNoCheckout     = "no-checkout"
	RuleWorkflowChange = "workflow-change"
	RuleBundleTooLarge = "bundle-too-large"
	RuleSpecialEntry   = prbundle.RuleSpecialEntry
)

// maxLoggedArgs caps the arguments kept per line; bodies are bounded by
// the input limits, but invalid calls can be anything.
const maxLoggedArgs = 128 << 10

// Record is one line of logs/gate.jsonl: one tool call and what the gate
// decided. `runner agent` turns these into policy.allowed/denied events.
type Record struct {
	Time        time.Time       `json:"time"`
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args"` // redacted
	Decision    string          `json:"decision"`
	Rule        string          `json:"rule,omitempty"`
	Reason      string          `json:"reason"`
	OutputIndex *int            `json:"output_index,omitempty"`
}

// appendRecord writes r as one synced line, so a crash loses at most it.
func appendRecord(path string, r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("gate log: encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("gate log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("gate log: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	for _, e := range []error{werr, serr, cerr} {
		if e != nil {
			return fmt.Errorf("gate log: write %s: %w", path, e)
		}
	}
	return nil
}

// redactArgs keeps the arguments as JSON with secrets replaced in every
// string (decoded first: a token after an escaped "\n" would slip past a
// regexp run on the raw text); anything that is not JSON, or too long, is
// kept as a redacted, clipped string.
func redactArgs(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(`{}`)
	}
	if len(raw) <= maxLoggedArgs {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil && !dec.More() {
			if b, err := json.Marshal(redactValue(v)); err == nil {
				return b
			}
		}
	}
	s := redact.String(string(raw))
	if len(s) > maxLoggedArgs {
		s = s[:maxLoggedArgs] + "…(cut)"
	}
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return redact.String(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = redactValue(e)
		}
	}
	return v
}

// ReadLog reads logs/gate.jsonl. A torn last line (the gate was killed
// mid-write) is reported as an error after the records before it.
func ReadLog(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4*maxLoggedArgs)
	for n := 1; sc.Scan(); n++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("gate log %s line %d: %w", path, n, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("gate log %s: %w", path, err)
	}
	return out, nil
}
