package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/enginetest"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// TestTailRollout: the searches of a rollout (lines as Codex 0.169.0
// wrote them, trimmed) become a tool use of SearchTool with the query and
// a result naming the tools found, one turn each; the rest of the
// rollout is left to the exec stream. The file is written in two pieces,
// the first ending mid-line, while the tail runs: whatever the tail saw
// before its end, it reads the rest then, so the result does not depend on
// timing.
func TestTailRollout(t *testing.T) {
	data, err := os.ReadFile("testdata/rollout.jsonl")
	require.NoError(t, err)
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "23")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	path := filepath.Join(dir, "rollout-2026-11-23T22-00-59-01a20a6d-393b-7dd0-8706-838311f13284.jsonl")

	m := newMapper(DefaultModel)
	ctx, cancel := context.WithCancel(context.Background())
	var evs []session.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.tailRollout(ctx, home, func(e []session.Event) { evs = append(evs, e...) })
	}()
	cut := len(data) / 2
	require.NoError(t, os.WriteFile(path, data[:cut], 0o600))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(data[cut:])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	cancel()
	<-done

	require.Equal(t, []session.EventKind{session.EventToolUse, session.EventToolResult, session.EventToolUse, session.EventToolResult},
		enginetest.Kinds(evs))
	assert.Equal(t, SearchTool, evs[0].ToolName)
	assert.JSONEq(t, `{"limit":8,"query":"noop gate"}`, string(evs[0].Input))
	assert.Equal(t, evs[0].ToolCallID, evs[1].ToolCallID)
	assert.Equal(t, "mcp__gate__noop\nmcp__gate__create_issue\nmcp__files__read_file", evs[1].Output)
	assert.False(t, evs[1].IsError)
	assert.JSONEq(t, `{"limit":8,"query":"create a pull request"}`, string(evs[2].Input))
	assert.Empty(t, evs[3].Output, "nothing found")
	assert.Equal(t, "codex_msg_1", evs[0].MessageID)
	assert.Equal(t, "codex_msg_2", evs[2].MessageID, "each search response is a turn")
}

// TestRolloutMapLines: single lines, and the mapper shared with the exec
// stream (one message count for both).
func TestRolloutMapLines(t *testing.T) {
	now := time.Now()
	call := `{"type":"response_item","payload":{"type":"tool_search_call","call_id":"c1","execution":"client","arguments":{"query":"gate"}}}`
	out := `{"type":"response_item","payload":{"type":"tool_search_output","call_id":"c1","status":"completed","tools":[{"type":"function","name":"plain"}]}}`
	for _, tc := range []struct {
		name  string
		lines []string
		want  []session.EventKind
		check func(t *testing.T, evs []session.Event)
	}{
		{"a call and its output", []string{call, out}, []session.EventKind{session.EventToolUse, session.EventToolResult},
			func(t *testing.T, evs []session.Event) { assert.Equal(t, "plain", evs[1].Output) }},
		{"each once", []string{call, call, out, out}, []session.EventKind{session.EventToolUse, session.EventToolResult}, nil},
		{"an output without its call is dropped", []string{out}, nil, nil},
		{"arguments as a string", []string{`{"type":"response_item","payload":{"type":"tool_search_call","call_id":"c2","arguments":"{\"query\":\"x\"}"}}`},
			[]session.EventKind{session.EventToolUse}, func(t *testing.T, evs []session.Event) {
				assert.JSONEq(t, `{"arguments":"{\"query\":\"x\"}"}`, string(evs[0].Input))
			}},
		{"a failed search", []string{call, `{"type":"response_item","payload":{"type":"tool_search_output","call_id":"c1","status":"failed"}}`},
			[]session.EventKind{session.EventToolUse, session.EventToolResult},
			func(t *testing.T, evs []session.Event) { assert.True(t, evs[1].IsError) }},
		{"other lines are the stream's", []string{
			`{"type":"response_item","payload":{"type":"function_call","name":"noop","namespace":"mcp__gate","arguments":"{}","call_id":"c3"}}`,
			`{"type":"event_msg","payload":{"type":"token_count"}}`, `not json`, `{"type":"response_item","payload":{"type":"tool_search_call"}}`}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMapper(DefaultModel)
			var evs []session.Event
			for _, l := range tc.lines {
				evs = append(evs, m.rolloutMap([]byte(l), now)...)
			}
			assert.Equal(t, tc.want, enginetest.Kinds(evs))
			if tc.check != nil {
				tc.check(t, evs)
			}
		})
	}

	// a search after a gate call's result starts the next turn, and the
	// stream's next message after the search's result the one after
	m := newMapper(DefaultModel)
	var evs []session.Event
	for _, l := range []string{
		`{"type":"item.started","item":{"id":"i1","type":"mcp_tool_call","server":"gate","tool":"noop","arguments":{},"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"mcp_tool_call","server":"gate","tool":"noop","arguments":{},"status":"completed"}}`,
	} {
		evs = append(evs, m.Map([]byte(l), 1, now)...)
	}
	evs = append(evs, m.rolloutMap([]byte(call), now)...)
	evs = append(evs, m.rolloutMap([]byte(out), now)...)
	evs = append(evs, m.Map([]byte(`{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"done"}}`), 3, now)...)
	var ids []string
	for _, e := range evs {
		if e.MessageID != "" {
			ids = append(ids, e.MessageID)
		}
	}
	assert.Equal(t, []string{"codex_msg_1", "codex_msg_2", "codex_msg_3"}, ids)
}

func FuzzRolloutMap(f *testing.F) {
	data, err := os.ReadFile("testdata/rollout.jsonl")
	require.NoError(f, err)
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m := newMapper(DefaultModel)
		for _, ev := range m.rolloutMap(line, time.Time{}) {
			if ev.Kind == session.EventToolUse && len(ev.Input) == 0 {
				t.Fatal("a tool use without input")
			}
		}
	})
}
