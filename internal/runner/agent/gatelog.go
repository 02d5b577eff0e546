package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
)

// gateTail reads logs/gate.jsonl incrementally: each call returns the
// records completed since the last one. A line still being written (no
// newline yet) waits for the next call.
type gateTail struct {
	path    string
	off     int64
	partial []byte
	line    int
}

// next returns the new whole records. Lines that are not records are
// returned as errors after the good ones, and skipped.
func (g *gateTail) next() ([]gate.Record, error) {
	f, err := os.Open(g.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gate log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(g.off, io.SeekStart); err != nil {
		return nil, fmt.Errorf("gate log: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("gate log: %w", err)
	}
	g.off += int64(len(data))
	data = append(g.partial, data...)
	var out []gate.Record
	var errs []error
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i]
		data = data[i+1:]
		g.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r gate.Record
		if err := json.Unmarshal(line, &r); err != nil {
			errs = append(errs, fmt.Errorf("gate log line %d: %w", g.line, err))
			continue
		}
		out = append(out, r)
	}
	g.partial = append([]byte(nil), data...)
	return out, errors.Join(errs...)
}

// rest is a last line the gate never finished (it was killed mid-write).
func (g *gateTail) rest() []byte { return bytes.TrimSpace(g.partial) }
