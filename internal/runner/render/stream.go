package render

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/render/turns"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// streamWindow bounds how many unfinished turns SessionStream holds while
// waiting for tool results.
const streamWindow = 16

// preCutBytes: a call's arguments or result larger than this are cut as
// they arrive, so one giant output does not sit in memory whole.
const preCutBytes = 1 << 20

// Write-behind bounds (NewPipelinedSessionStream): a batch of finished
// turns goes to the writing goroutine at pipeTurns turns or about
// pipeBytes of content, and at most pipeBatches batches wait, so memory
// stays bounded whatever the session's length.
const (
	pipeTurns   = 64
	pipeBytes   = 256 << 10
	pipeBatches = 2
)

// SessionStream renders a session from engine events as they come, writing
// each turn as soon as it is complete, for logs too big to hold. It writes
// one part (no splitting) whose text equals SessionMarkdown's for the same
// events when nothing needed cutting early.
type SessionStream struct {
	asm      *turns.Assembler
	released []session.TurnProjection // reused by release
	ended    bool
	closed   bool
	// preCut says how many characters of a call's arguments or result
	// were dropped as they arrived, until its turn is released.
	preCut map[string]cutCounts
	out    *turnWriter

	// write-behind (pipelined streams only; nil otherwise)
	work    chan []finishedTurn
	free    chan []finishedTurn
	done    chan struct{}
	batch   []finishedTurn
	size    int
	failed  atomic.Bool // the writing goroutine stopped on an error
	stopped atomic.Bool // Stop: write nothing more
	err     error       // what Close returned
}

// finishedTurn is a released turn with the early cuts of its calls.
type finishedTurn struct {
	t    session.TurnProjection
	cuts map[string]cutCounts // nil: nothing was cut early
}

// turnWriter renders finished turns and writes them; in a pipelined
// stream only its goroutine touches it until Close has waited for it.
type turnWriter struct {
	w     io.Writer
	r     turnRenderer
	wrote bool
	err   error
	arena []byte // r's: a turn's tool calls, written before the next turn
}

// maxArena: a bigger arena (a turn of huge calls) is not kept for the next.
const maxArena = 1 << 20

// NewSessionStream writes to w as events are added.
func NewSessionStream(w io.Writer, o SessionOptions) *SessionStream {
	out := &turnWriter{w: w, r: turnRenderer{o: o.withDefaults()}}
	out.r.arena = &out.arena
	return &SessionStream{
		asm:    turns.New(streamWindow),
		preCut: map[string]cutCounts{},
		out:    out,
	}
}

// NewPipelinedSessionStream is NewSessionStream whose rendering and writing
// run on a goroutine of its own while the caller decodes and adds the next
// events (two cores for a log that is read from a file). The text written
// is the same; w is written only by that goroutine, and not after Close
// returns. A write error comes back from a later Add or from Close.
func NewPipelinedSessionStream(w io.Writer, o SessionOptions) *SessionStream {
	s := NewSessionStream(w, o)
	s.work = make(chan []finishedTurn, pipeBatches)
	s.free = make(chan []finishedTurn, pipeBatches+2)
	s.done = make(chan struct{})
	go s.writeBehind()
	return s
}

// Add takes the next event; it returns the first write error, if any.
func (s *SessionStream) Add(ev session.Event) error {
	if s.closed {
		return fmt.Errorf("render: session stream already closed")
	}
	if s.halted() {
		if s.work != nil {
			return s.Close() // winds the goroutine down; the error is the writer's
		}
		return s.out.err
	}
	s.trim(&ev)
	if ev.Kind == session.EventResult {
		s.ended = true
	}
	s.asm.Take(ev)
	return s.release()
}

// Close writes the turns still open; calls without a result show "no result",
// or "cancelled" when the engine ended the session.
func (s *SessionStream) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	status := session.ToolPending
	if s.ended {
		status = session.ToolCancelled
	}
	if !s.halted() {
		s.asm.Flush(status)
		_ = s.release()
	}
	if s.work != nil {
		s.send()
		close(s.work)
		<-s.done
	}
	o := s.out
	if o.err == nil && !o.wrote {
		if _, err := io.WriteString(o.w, "## Session\n\n"+noMessages); err != nil {
			o.err = fmt.Errorf("render: write session: %w", err)
		}
	}
	s.err = o.err
	return s.err
}

// Stop ends the stream without rendering the turns still open (the caller
// gave up on the input): a pipelined stream's goroutine is wound down and
// writes nothing more; turns already written stay. After Stop, Add and
// Close do nothing but return an error or nil.
func (s *SessionStream) Stop() {
	if s.closed {
		return
	}
	s.closed = true
	if s.work != nil {
		s.stopped.Store(true)
		close(s.work)
		<-s.done
	}
}

// halted reports a write error: nothing more is rendered.
func (s *SessionStream) halted() bool {
	if s.work != nil {
		return s.failed.Load()
	}
	return s.out.err != nil
}

// trim cuts giant arguments and results as they arrive (redacting first, so
// no token is left half-visible at the cut).
func (s *SessionStream) trim(ev *session.Event) {
	limit := s.out.r.o.MaxResultChars
	switch {
	case ev.Kind == session.EventToolUse && len(ev.Input) > preCutBytes:
		kept, n := cutRunes(redact.String(string(ev.Input)), limit)
		c := s.preCut[ev.ToolCallID]
		c.args = n
		s.preCut[ev.ToolCallID] = c
		ev.Input = []byte(kept)
	case ev.Kind == session.EventToolResult && len(ev.Output) > preCutBytes:
		kept, n := cutRunes(redact.String(ev.Output), limit)
		c := s.preCut[ev.ToolCallID]
		c.result = n
		s.preCut[ev.ToolCallID] = c
		ev.Output = kept
	}
}

// release hands the turns the assembler released to the writer, each with
// the early cuts of its calls (taken out of preCut).
func (s *SessionStream) release() error {
	s.released = s.asm.AppendReleased(s.released[:0])
	defer clear(s.released) // the writer has its own copies
	for _, t := range s.released {
		f := finishedTurn{t: t}
		if len(s.preCut) > 0 {
			for _, c := range t.ToolCalls {
				if n, ok := s.preCut[c.ID]; ok {
					if f.cuts == nil {
						f.cuts = map[string]cutCounts{}
					}
					f.cuts[c.ID] = n
					delete(s.preCut, c.ID)
				}
			}
		}
		if s.work == nil {
			if err := s.out.write(f); err != nil {
				return err
			}
			continue
		}
		s.batch = append(s.batch, f)
		s.size += turnSize(t)
		if len(s.batch) >= pipeTurns || s.size >= pipeBytes {
			s.send()
		}
	}
	return nil
}

// send hands the current batch to the writing goroutine.
func (s *SessionStream) send() {
	if len(s.batch) == 0 {
		return
	}
	s.work <- s.batch
	s.size = 0
	select {
	case s.batch = <-s.free:
	default:
		s.batch = make([]finishedTurn, 0, pipeTurns)
	}
}

// writeBehind is the writing goroutine: it renders and writes every batch;
// after a write error it only drains the rest.
func (s *SessionStream) writeBehind() {
	defer close(s.done)
	for b := range s.work {
		for _, f := range b {
			if !s.stopped.Load() && s.out.write(f) != nil {
				s.failed.Store(true)
			}
		}
		clear(b) // drop the turns before the array is reused
		select {
		case s.free <- b[:0]:
		default:
		}
	}
}

// turnSize approximates the memory a finished turn holds.
func turnSize(t session.TurnProjection) int {
	n := 256
	for _, b := range t.Blocks {
		if s, ok := b.Content.(string); ok {
			n += len(s)
		}
	}
	for _, c := range t.ToolCalls {
		n += len(c.Arguments)
		if s, ok := c.Result.(string); ok {
			n += len(s)
		}
	}
	return n
}

// write renders one finished turn and writes it: the bytes of unit's
// pieces, each after a blank line (the first after the heading), written
// piece by piece without joining them first.
func (o *turnWriter) write(f finishedTurn) error {
	if o.err != nil {
		return o.err
	}
	// the last turn's pieces are written (w does not keep them: io.Writer)
	o.arena = o.arena[:0]
	if cap(o.arena) > maxArena {
		o.arena = nil
	}
	r := o.r
	r.preCut = f.cuts
	p, ok := r.parts(f.t)
	if !ok {
		return nil
	}
	sep := "\n"
	if !o.wrote {
		sep = "## Session\n\n"
		o.wrote = true
	}
	segs := make([]string, 0, 3*len(p.items)+4)
	segs = append(segs, sep, p.label, "\n")
	for i, it := range p.items {
		if i > 0 || !p.isText[0] {
			segs = append(segs, "\n") // the blank line before the next piece
		}
		segs = append(segs, it)
		if p.isText[i] {
			segs = append(segs, "\n")
		}
	}
	if p.rule {
		segs = append(segs, "\n---\n")
	}
	for _, s := range segs {
		if _, err := io.WriteString(o.w, s); err != nil {
			o.err = fmt.Errorf("render: write session: %w", err)
			return o.err
		}
	}
	return nil
}
