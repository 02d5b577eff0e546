package process

import (
	"fmt"
	"strings"
)

// ExitError is an engine's CLI ending badly: a non-zero exit, death by
// signal, or an exit without a result. It carries the original error text
// (the CLI's own result or error message and the tail of its stderr).
type ExitError struct {
	Program  string // "claude code", "codex", "gemini cli"
	Code     int    // exit code, -1 when killed by a signal
	Signal   string // the signal that killed it, if any
	NoResult bool   // the stream ended without a result
	Stderr   string // tail of stderr
	Result   string // the engine's own error or result text, if any
}

// NewExitError describes x; result is the engine's own text ("" if none).
func NewExitError(program string, x Exit, noResult bool, result string) *ExitError {
	e := &ExitError{Program: program, Code: x.Code, Signal: x.Signal, NoResult: noResult, Stderr: x.Stderr, Result: result}
	if x.WaitErr != nil {
		// e.g. an I/O error on the pipes after WaitDelay
		e.Stderr = strings.TrimSpace(e.Stderr + "\n" + x.WaitErr.Error())
	}
	return e
}

func (e *ExitError) Error() string {
	var what string
	switch {
	case e.Signal != "":
		what = e.Program + " was killed by " + e.Signal
	case e.Code != 0:
		what = fmt.Sprintf("%s exited with status %d", e.Program, e.Code)
	default:
		what = e.Program + " exited"
	}
	if e.NoResult {
		what += " without reporting a result"
	}
	var detail []string
	if r := strings.TrimSpace(e.Result); r != "" {
		detail = append(detail, r)
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		detail = append(detail, "stderr:\n"+s)
	}
	if len(detail) > 0 {
		what += ": " + strings.Join(detail, "\n")
	}
	return what
}
