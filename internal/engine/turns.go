package engine

import "github.com/mention-runner/mention-runner/internal/session"

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
