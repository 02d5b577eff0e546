package turns

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

var t0 = time.Date(2026, 4, 26, 10, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestAssembler(t *testing.T) {
	a := New(0)
	evs := []session.Event{
		{Kind: session.EventInit, Init: &session.Init{Model: "m-init"}},
		{Kind: session.EventUserText, Time: at(0), Text: "task"},
		{Kind: session.EventText, Time: at(10), MessageID: "msg_1", Model: "m1", Text: "looking"},
		{Kind: session.EventToolUse, Time: at(20), MessageID: "msg_1", ToolCallID: "c1", ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`), Usage: &session.Usage{InputTokens: 5, OutputTokens: 7}},
		{Kind: session.EventToolUse, Time: at(20), MessageID: "msg_1", ToolCallID: "c1", ToolName: "Bash"}, // duplicate id
		{Kind: session.EventToolUse, Time: at(25), MessageID: "msg_1", ToolCallID: "c2", ToolName: "Read", Input: json.RawMessage(`{`)},
		{Kind: session.EventToolResult, Time: at(70), ToolCallID: "c1", Output: "a\nb"},
		{Kind: session.EventToolResult, Time: at(80), ToolCallID: "nope", Output: "?"},
		{Kind: session.EventText, Time: at(100), MessageID: "msg_2", Text: "still waiting on c2"},
		{Kind: session.EventToolResult, Time: at(125), ToolCallID: "c2", Output: "denied", IsError: true},
		{Kind: session.EventResult, Time: at(130), Result: &session.Result{Subtype: "success"}},
	}
	var changes []Change
	for _, ev := range evs {
		changes = append(changes, a.Add(ev))
	}
	assert.True(t, changes[4].Duplicate)
	assert.True(t, changes[7].Orphan)
	require.NotNil(t, changes[9].Completed)
	assert.Equal(t, session.ToolError, changes[9].Completed.Status)
	assert.Equal(t, int64(100), *changes[9].Completed.DurationMS)
	assert.Equal(t, 1, a.orphans)

	got := a.Released()
	require.Len(t, got, 4)
	user, first, second := got[0], got[1], got[2]
	assert.Equal(t, "system", got[3].Role, "the engine's result is a system turn")
	assert.Equal(t, "Result: success · 0 turns · 0.0 s", got[3].Blocks[0].Content)
	assert.Equal(t, "user", user.Role)
	assert.Equal(t, "assistant", first.Role)
	assert.Equal(t, "turn_msg_1", first.TurnID)
	assert.Equal(t, "m1", *first.Model)
	assert.Equal(t, &session.Usage{InputTokens: 5, OutputTokens: 7}, first.Usage)
	assert.Equal(t, []int{0, 1, 2}, []int{user.Sequence, first.Sequence, second.Sequence})
	require.Len(t, first.ToolCalls, 2)
	assert.Equal(t, session.ToolDone, first.ToolCalls[0].Status)
	assert.Equal(t, "a\nb", first.ToolCalls[0].Result)
	assert.Equal(t, int64(50), *first.ToolCalls[0].DurationMS)
	assert.Equal(t, `{`, first.ToolCalls[1].Arguments, "arguments kept as sent")
	assert.Equal(t, int64(115), first.DurationMS, "turn lasts until its last result")
	assert.Equal(t, "completed", first.Status)
	assert.Equal(t, "m-init", *second.Model, "model falls back to init")
	// blocks point at their calls
	require.Len(t, first.Blocks, 3)
	assert.Equal(t, "tool_use", first.Blocks[1].Type)
	assert.Equal(t, "c1", *first.Blocks[1].ToolCallID)
	_, err := json.Marshal(first) // invalid input JSON must not break encoding
	assert.NoError(t, err)
	assert.Empty(t, a.Flush(session.ToolCancelled))
}

func TestAssemblerWithoutMessageIDs(t *testing.T) {
	a := New(0)
	for _, ev := range []session.Event{
		{Kind: session.EventText, Text: "a"},
		{Kind: session.EventToolUse, ToolCallID: "1", ToolName: "T"},
		{Kind: session.EventText, Text: "same message"},
		{Kind: session.EventToolResult, ToolCallID: "1"},
		{Kind: session.EventText, Text: "new message after a result"},
	} {
		a.Add(ev)
	}
	a.Flush(session.ToolPending)
	got := a.Released()
	require.Len(t, got, 2)
	assert.Len(t, got[0].Blocks, 3)
	assert.Equal(t, "turn_0", got[0].TurnID)
}

func TestAssemblerWindowBoundsMemory(t *testing.T) {
	a := New(2)
	// calls that never get a result must not hold turns forever
	for i := range 5 {
		a.Add(session.Event{Kind: session.EventToolUse, MessageID: string(rune('a' + i)), ToolCallID: string(rune('A' + i)), ToolName: "T"})
	}
	assert.Len(t, a.Pending(), 2)
	rel := a.Released()
	require.Len(t, rel, 3)
	assert.Equal(t, session.ToolPending, rel[0].ToolCalls[0].Status)
	ch := a.Add(session.Event{Kind: session.EventToolResult, ToolCallID: "A"})
	assert.True(t, ch.Orphan, "a result after its turn was released is an orphan")
	open := a.Flush(session.ToolCancelled)
	assert.Len(t, open, 2)
	assert.Len(t, a.Released(), 2)
	assert.Empty(t, a.Pending())
}

func TestAssemblerPendingIsACopy(t *testing.T) {
	a := New(0)
	a.Add(session.Event{Kind: session.EventToolUse, MessageID: "m", ToolCallID: "c", ToolName: "T"})
	p := a.Pending()
	require.Len(t, p, 1)
	p[0].ToolCalls[0].Status = "mutated"
	assert.Equal(t, session.ToolPending, a.Pending()[0].ToolCalls[0].Status)
}

// TestToolUseEncodesAsTheMap: session.json holds the same bytes as a
// tool_use block's content encoded as map[string]any{"id", "name", "input"}.
func TestToolUseEncodesAsTheMap(t *testing.T) {
	mapped := func(in []byte) any { // what the map held as "input"
		switch {
		case len(in) == 0:
			return map[string]any{}
		case json.Valid(in):
			return json.RawMessage(in)
		}
		return string(in)
	}
	for _, in := range []string{``, `{}`, `{"command": "ls <a> && b",  "n" : [1, 2.50]}`, `{`, `"x"`, `not json <&>`, "{\"s\":\"\u2028\"}", "\xff"} {
		for _, id := range []string{"toolu_1", "<&>\u2028"} {
			want, err := json.Marshal(map[string]any{"id": id, "name": "Bash<", "input": mapped([]byte(in))})
			require.NoError(t, err)
			got, err := json.Marshal(ToolUse{ID: id, Input: toolInput(in), Name: "Bash<"})
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "input %q", in)
			if in == "" {
				got, err = json.Marshal(ToolUse{ID: id, Name: "Bash<"}) // nil input
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got))
			}
		}
	}
}

// TestTakeMatchesAdd: Take and AppendReleased (the streaming renderer's
// path, reusing turn structs and the released array) release exactly the
// turns Add and Released do, and turns already handed out never change.
func TestTakeMatchesAdd(t *testing.T) {
	var evs []session.Event
	for i := range 50 {
		id := "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		evs = append(evs,
			session.Event{Kind: session.EventUserText, Time: at(i * 10), Text: "task"},
			session.Event{Kind: session.EventText, Time: at(i*10 + 1), MessageID: "m" + id, Model: "m", Text: "looking"},
			session.Event{Kind: session.EventToolUse, Time: at(i*10 + 2), MessageID: "m" + id, ToolCallID: id, ToolName: "Bash", Input: json.RawMessage(`{"n":1}`)},
			session.Event{Kind: session.EventToolResult, Time: at(i*10 + 5), ToolCallID: id, Output: "ok"},
			session.Event{Kind: session.EventNotice, Time: at(i*10 + 6), Text: "hook"},
		)
	}
	evs = append(evs, session.Event{Kind: session.EventResult, Time: at(999), Result: &session.Result{Subtype: "success"}})
	for _, window := range []int{0, 2} {
		add, take := New(window), New(window)
		var want, got, snapshot []session.TurnProjection
		var buf []session.TurnProjection
		for _, ev := range evs {
			add.Add(ev)
			want = append(want, add.Released()...)
			take.Take(ev)
			buf = take.AppendReleased(buf[:0])
			for _, tp := range buf {
				got = append(got, tp)
				snapshot = append(snapshot, encoded(t, tp))
			}
		}
		add.Flush(session.ToolCancelled)
		want = append(want, add.Released()...)
		take.Flush(session.ToolCancelled)
		for _, tp := range take.AppendReleased(nil) {
			got = append(got, tp)
			snapshot = append(snapshot, encoded(t, tp))
		}
		require.Len(t, got, len(want))
		assert.Equal(t, want, got)
		for i := range got { // as encoded when handed out, after later events
			assert.Equal(t, snapshot[i], encoded(t, got[i]), "turn %d changed after it was released", i)
		}
	}
}

// encoded is tp as session.json would hold it, read back.
func encoded(t *testing.T, tp session.TurnProjection) session.TurnProjection {
	b, err := json.Marshal(tp)
	require.NoError(t, err)
	var back session.TurnProjection
	require.NoError(t, json.Unmarshal(b, &back))
	return back
}
