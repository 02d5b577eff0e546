// Package enginetest tests engines: it runs one and collects its events,
// and for an engine's event mapper (the code that turns its CLI's JSONL
// stream into session events) decodes a capture the way
// process.RunStream does, runs table rows of lines against a fresh
// mapper, and fuzzes a mapper for the one rule every engine keeps.
package enginetest

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Mapper is one engine's mapper for a run: Map decodes a line, Flush
// (nil when the engine holds nothing back) returns what it still holds
// when the stream ends.
type Mapper struct {
	Map   streamjson.LineMapper
	Flush func() []session.Event
}

// Decode maps every line of in with m, then flushes it, as
// process.RunStream does.
func Decode(in []byte, m Mapper) []session.Event {
	dec := streamjson.NewDecoder(bytes.NewReader(in))
	dec.Map = m.Map
	var out []session.Event
	for {
		ev, err := dec.Next()
		if err != nil {
			break
		}
		out = append(out, ev)
	}
	if m.Flush != nil {
		out = append(out, m.Flush()...)
	}
	return out
}

// DecodeFile is Decode of a capture file (under testdata/).
func DecodeFile(t testing.TB, path string, m Mapper) []session.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return Decode(b, m)
}

// Run runs e on spec and returns the events its sink received, in order,
// with what Run returned.
func Run(ctx context.Context, e engine.Engine, spec engine.Spec) ([]session.Event, *session.Result, error) {
	var evs []session.Event
	res, err := e.Run(ctx, spec, func(ev session.Event) { evs = append(evs, ev) })
	return evs, res, err
}

// Kinds lists the kinds of evs, in order.
func Kinds(evs []session.Event) []session.EventKind {
	var out []session.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// Case is one row of a mapper's table test: Lines (JSONL) must map to
// events of kinds Want; Check, when set, says more about them.
type Case struct {
	Name  string
	Lines string
	Want  []session.EventKind
	Check func(t *testing.T, evs []session.Event)
}

// RunCases decodes each case's lines with a fresh mapper from newMapper.
func RunCases(t *testing.T, newMapper func() Mapper, cases []Case) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			evs := Decode([]byte(tc.Lines), newMapper())
			require.Equal(t, tc.Want, Kinds(evs))
			if tc.Check != nil {
				tc.Check(t, evs)
			}
		})
	}
}

// FuzzMapper feeds arbitrary streams (seeded with the capture at path and
// seeds) to a fresh mapper: it must never panic, and never emit a tool use
// without input.
func FuzzMapper(f *testing.F, path string, newMapper func() Mapper, seeds ...[]byte) {
	b, err := os.ReadFile(path)
	require.NoError(f, err)
	f.Add(b)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m := newMapper()
		for i, line := range bytes.Split(in, []byte("\n")) {
			for _, ev := range m.Map(line, i+1, time.Time{}) {
				if ev.Kind == session.EventToolUse && len(ev.Input) == 0 {
					t.Fatalf("tool use without input: %q", line)
				}
			}
		}
		if m.Flush != nil {
			m.Flush()
		}
	})
}
