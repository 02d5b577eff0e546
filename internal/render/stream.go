package render

import (
	"fmt"
	"io"

	"github.com/mention-runner/mention-runner/internal/redact"
	"github.com/mention-runner/mention-runner/internal/render/turns"
	"github.com/mention-runner/mention-runner/internal/session"
)

// streamWindow bounds how many unfinished turns SessionStream holds while
// waiting for tool results.
const streamWindow = 16

// preCutBytes: a call's arguments or result larger than this are cut as
// they arrive, so one giant output does not sit in memory whole.
const preCutBytes = 1 << 20

// SessionStream renders a session from engine events as they come, writing
// each turn as soon as it is complete, for logs too big to hold. It writes
// one part (no splitting) whose text equals SessionMarkdown's for the same
// events when nothing needed cutting early.
type SessionStream struct {
	w      io.Writer
	r      turnRenderer
	asm    *turns.Assembler
	wrote  bool
	ended  bool
	err    error
	closed bool
}

// NewSessionStream writes to w.
func NewSessionStream(w io.Writer, o SessionOptions) *SessionStream {
	return &SessionStream{
		w:   w,
		r:   turnRenderer{o: o.withDefaults(), preCut: map[string]cutCounts{}},
		asm: turns.New(streamWindow),
	}
}

// Add takes the next event; it returns the first write error, if any.
func (s *SessionStream) Add(ev session.Event) error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return fmt.Errorf("render: session stream already closed")
	}
	s.trim(&ev)
	if ev.Kind == session.EventResult {
		s.ended = true
	}
	s.asm.Add(ev)
	return s.write(s.asm.Released())
}

// Close writes the turns still open; calls without a result show "no result",
// or "cancelled" when the engine ended the session.
func (s *SessionStream) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	if s.err != nil {
		return s.err
	}
	status := session.ToolPending
	if s.ended {
		status = session.ToolCancelled
	}
	s.asm.Flush(status)
	if err := s.write(s.asm.Released()); err != nil {
		return err
	}
	if !s.wrote {
		_, s.err = io.WriteString(s.w, "## Session\n\n"+noMessages)
	}
	return s.err
}

// trim cuts giant arguments and results as they arrive (redacting first, so
// no token is left half-visible at the cut).
func (s *SessionStream) trim(ev *session.Event) {
	limit := s.r.o.MaxResultChars
	switch {
	case ev.Kind == session.EventToolUse && len(ev.Input) > preCutBytes:
		kept, n := cutRunes(redact.String(string(ev.Input)), limit)
		c := s.r.preCut[ev.ToolCallID]
		c.args = n
		s.r.preCut[ev.ToolCallID] = c
		ev.Input = []byte(kept)
	case ev.Kind == session.EventToolResult && len(ev.Output) > preCutBytes:
		kept, n := cutRunes(redact.String(ev.Output), limit)
		c := s.r.preCut[ev.ToolCallID]
		c.result = n
		s.r.preCut[ev.ToolCallID] = c
		ev.Output = kept
	}
}

func (s *SessionStream) write(ts []session.TurnProjection) error {
	for _, t := range ts {
		u := s.r.unit(t)
		for _, c := range t.ToolCalls {
			delete(s.r.preCut, c.ID)
		}
		for _, p := range u.pieces {
			prefix := "\n"
			if !s.wrote {
				prefix = "## Session\n\n"
				s.wrote = true
			}
			_, err := io.WriteString(s.w, prefix)
			if err == nil {
				_, err = io.WriteString(s.w, p)
			}
			if err != nil {
				s.err = fmt.Errorf("render: write session: %w", err)
				return s.err
			}
		}
	}
	return nil
}
