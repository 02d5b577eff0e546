package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Stream is an engine CLI whose stdout is a JSONL event stream.
type Stream struct {
	Program string // names the CLI in errors: "claude code", "codex", "gemini cli"
	Spec    Spec
	// Map decodes one line; nil means Claude Code's stream-json.
	Map streamjson.LineMapper
	// Flush returns events a mapper still holds when the stream ends.
	Flush func() []session.Event
	// MaxTurns makes the engine stop the CLI when the model would start a
	// turn past it (for CLIs without a turn limit of their own); zero
	// means the CLI enforces it, or there is none.
	MaxTurns int
	// Side, when set, is a second source of events beside stdout (a
	// record the CLI writes of what its stream leaves out). It runs while
	// the CLI does; its ctx ends when the CLI has exited and stdout is
	// read, and it must then hand over what is left and return. Its
	// events count toward MaxTurns like the stream's; emit is safe to
	// call from its goroutine.
	Side func(ctx context.Context, emit func([]session.Event))
}

var errMaxTurns = errors.New("turn limit reached")

// RunStream runs s, handing each event to sink in order, and returns the
// CLI's result event (nil when none came). The error is an *ExitError
// when the CLI exited badly or without a result (a clean exit with an
// error result is for the caller to judge), ctx's cause (wrapped) when it
// was stopped, or a start failure. A run stopped at MaxTurns returns an
// error_max_turns result (also sent to sink) and no error.
func RunStream(ctx context.Context, s Stream, sink engine.Sink) (*session.Result, error) {
	if sink == nil {
		sink = func(session.Event) {}
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	limit := engine.TurnLimit{Max: s.MaxTurns}
	var result *session.Result
	hitLimit := false
	var mu sync.Mutex // deliver runs on stdout's and Side's goroutines
	deliver := func(ev session.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Kind == session.EventResult && ev.Result != nil {
			r := *ev.Result
			result = &r
		}
		sink(ev)
		if !hitLimit && limit.Observe(ev) {
			hitLimit = true
			stop(errMaxTurns)
		}
	}
	sideCtx, sideDone := context.WithCancel(ctx)
	sideEnded := make(chan struct{})
	if s.Side == nil {
		close(sideEnded)
	} else {
		go func() {
			defer close(sideEnded)
			s.Side(sideCtx, func(evs []session.Event) {
				for _, ev := range evs {
					deliver(ev)
				}
			})
		}()
	}
	x, err := Run(ctx, s.Spec, func(r io.Reader) {
		dec := streamjson.NewDecoder(r)
		dec.Map = s.Map
		for {
			ev, err := dec.Next()
			if err != nil {
				break
			}
			deliver(ev)
		}
		if s.Flush != nil {
			for _, ev := range s.Flush() {
				deliver(ev)
			}
		}
	})
	sideDone()
	<-sideEnded
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Program, err)
	}
	if hitLimit && errors.Is(context.Cause(ctx), errMaxTurns) {
		r := &session.Result{Subtype: engine.SubtypeMaxTurns, IsError: true, NumTurns: limit.Turns(),
			Text: fmt.Sprintf("%s was stopped after %d turns (the turn limit)", s.Program, limit.Turns())}
		sink(session.Event{Kind: session.EventResult, Time: time.Now(), IsError: true, Result: r})
		return r, nil
	}
	if x.Stopped {
		return result, fmt.Errorf("%s: stopped: %w", s.Program, context.Cause(ctx))
	}
	if x.Code == 0 && x.Signal == "" && result != nil {
		return result, nil
	}
	text := ""
	if result != nil {
		text = result.Text
	}
	return result, NewExitError(s.Program, x, result == nil, text)
}

// WorkDir makes the empty working directory an engine runs its CLI in,
// under the fresh HOME the runner makes for every run (named in env), so
// the CLI discovers no project file of the target repository.
func WorkDir(env []string) (home, dir string, err error) {
	home = Lookup(env, "HOME")
	if home == "" {
		return "", "", errors.New("the environment has no HOME (the runner makes a fresh one per run)")
	}
	dir = filepath.Join(home, "work")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	return home, dir, nil
}

// Lookup is the value of name in env ("" when absent; the last wins).
func Lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// SetEnv is env with name set to value (any earlier value removed).
func SetEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
