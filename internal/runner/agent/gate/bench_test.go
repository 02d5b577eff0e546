package gate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// BenchmarkDecision is one allowed call end to end minus MCP framing:
// parse, decide, append to outputs.jsonl (fsync), log to gate.jsonl (fsync).
func BenchmarkDecision(b *testing.B) {
	g, err := New(baseConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	raw := json.RawMessage(`{"reason":"benchmark"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := g.handle(context.Background(), contract.ToolNoop, raw, parseNoop); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkDenial is a denied call: no queue write, one log line.
func BenchmarkDenial(b *testing.B) {
	c := withFlags(b, baseConfig(b), "here-only")
	g, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	raw := json.RawMessage(`{"repo":"octo/app","title":"t","body":"b"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := g.handle(context.Background(), contract.ToolCreateIssue, raw, parseCreateIssue); !res.IsError {
			b.Fatal("allowed")
		}
	}
}
