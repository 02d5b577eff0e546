package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// syntheticEvents is a long session: turns of text, a tool call and a
// result of a few KB, like a busy Claude Code run.
func syntheticEvents(turns int) ([]session.Event, int64) {
	out := strings.Repeat("ok 12 src/file.go:42: some output line\n", 60)
	var evs []session.Event
	var n int64
	evs = append(evs, session.Event{Kind: session.EventUserText, Text: "Fix the failing tests."})
	for i := range turns {
		id := fmt.Sprintf("msg_%d", i)
		call := fmt.Sprintf("toolu_%d", i)
		in := json.RawMessage(fmt.Sprintf(`{"command":"go test ./pkg/%d/...","timeout":120000}`, i))
		evs = append(evs,
			session.Event{Kind: session.EventText, MessageID: id, Text: "Running the tests for the next package to see what fails."},
			session.Event{Kind: session.EventToolUse, MessageID: id, ToolCallID: call, ToolName: "Bash", Input: in},
			session.Event{Kind: session.EventToolResult, ToolCallID: call, Output: out, IsError: i%7 == 0},
		)
		n += int64(len(in) + len(out) + 60)
	}
	return evs, n
}

func BenchmarkSessionStream(b *testing.B) {
	evs, size := syntheticEvents(2000)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		s := NewSessionStream(io.Discard, SessionOptions{})
		for _, ev := range evs {
			if err := s.Add(ev); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSessionMarkdown(b *testing.B) {
	evs, size := syntheticEvents(2000)
	s := assemble(evs)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		_ = SessionMarkdown(s, SessionOptions{})
	}
}
