package redact

import "io"

// Writer returns w with String applied to every write: for a process's
// own log stream (one record a write), so what an operator or a public
// Actions log shows never holds a registered secret or a token's shape.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

// Write writes p redacted and reports p as written whole (the caller's
// bytes, not the redacted ones, are what it asked for).
func (x writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(x.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
