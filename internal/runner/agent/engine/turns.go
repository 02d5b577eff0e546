package engine

import (
	"strconv"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// SubtypeMaxTurns is the Result subtype of a run stopped at Spec.MaxTurns
// (the name Claude Code reports it by; the runner classifies on it).
const SubtypeMaxTurns = "error_max_turns"

// TurnLimit enforces Spec.MaxTurns for a CLI without a turn limit of its
// own: it counts assistant messages (distinct MessageIDs) and says to stop
// when the model has had its last turn and a tool result would make it
// take another. Zero Max means no limit.
type TurnLimit struct {
	Max   int
	turns int
	last  string
}

// Observe counts ev and reports whether the run must stop now.
func (t *TurnLimit) Observe(ev session.Event) bool {
	switch ev.Kind {
	case session.EventText, session.EventThinking, session.EventToolUse:
		if ev.MessageID != t.last {
			t.turns++
			t.last = ev.MessageID
		}
	case session.EventToolResult:
		return t.Max > 0 && t.turns >= t.Max
	}
	return false
}

// Turns is the number of assistant messages seen.
func (t *TurnLimit) Turns() int { return t.turns }

// Messages names the assistant messages of a CLI whose stream does not
// (codex, gemini) the way Claude Code's message ids fall: a tool result
// ends the current message, and the next assistant event starts a new
// one. TurnLimit counts turns by these ids. The zero value
// starts at message 1.
type Messages struct {
	Prefix string // "codex_msg_": IDs are Prefix plus the message's number
	done   int    // messages ended and followed by a new one
	ended  bool   // a tool result ended the current message
}

// ID is the current message's id, starting the next message first when a
// tool result ended the last one.
func (m *Messages) ID() string {
	if m.ended {
		m.done++
		m.ended = false
	}
	return m.Prefix + strconv.Itoa(m.done+1)
}

// End records that a tool result ended the current message.
func (m *Messages) End() { m.ended = true }

// Turns is the number of the current message: the turns so far.
func (m *Messages) Turns() int { return m.done + 1 }
