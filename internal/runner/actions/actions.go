// Package actions is a thin wrapper around go-githubactions that returns
// errors instead of panicking, works outside Actions (no GITHUB_OUTPUT:
// outputs are printed), and reads an output file back for tests.
package actions

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Toolkit writes workflow commands to a writer and outputs to $GITHUB_OUTPUT.
type Toolkit struct {
	a      *githubactions.Action
	w      io.Writer
	getenv func(string) string
}

// New returns a toolkit reading the environment through getenv and writing
// log lines and workflow commands to w.
func New(getenv func(string) string, w io.Writer) *Toolkit {
	return &Toolkit{
		a:      githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(w)),
		w:      w,
		getenv: getenv,
	}
}

// SetOutput sets a step output. Outside Actions (GITHUB_OUTPUT unset) it
// prints "output name=value" so a local run still shows the result.
func (t *Toolkit) SetOutput(name, value string) (err error) {
	if strings.ContainsAny(name, "\r\n=<") || name == "" {
		return fmt.Errorf("actions: output name %q is not valid", name)
	}
	if t.getenv("GITHUB_OUTPUT") == "" {
		_, err := fmt.Fprintf(t.w, "output %s=%s\n", name, value)
		return err
	}
	// go-githubactions panics when the file cannot be written.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("actions: set output %s: %v", name, r)
		}
	}()
	t.a.SetOutput(name, value)
	return nil
}

// Infof logs a plain line.
func (t *Toolkit) Infof(format string, a ...any) { t.guard(func() { t.a.Infof(format, a...) }) }

// Warningf logs a ::warning:: annotation.
func (t *Toolkit) Warningf(format string, a ...any) { t.guard(func() { t.a.Warningf(format, a...) }) }

// Errorf logs an ::error:: annotation.
func (t *Toolkit) Errorf(format string, a ...any) { t.guard(func() { t.a.Errorf(format, a...) }) }

// guard drops a log line the writer refused: logging must not crash a run.
func (t *Toolkit) guard(f func()) {
	defer func() { _ = recover() }()
	f()
}

// ReadOutputs parses a GITHUB_OUTPUT file: "name=value" lines and
// "name<<DELIM" … "DELIM" blocks. A later value of a name replaces an
// earlier one, as in Actions.
func ReadOutputs(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("actions: read outputs: %w", err)
	}
	return ParseOutputs(data)
}

// ParseOutputs parses the contents of a GITHUB_OUTPUT file.
func ParseOutputs(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSuffix(sc.Text(), "\r")
		if l == "" {
			continue
		}
		if name, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(name, "=") {
			if name == "" || delim == "" {
				return nil, fmt.Errorf("actions: outputs line %d: empty name or delimiter", line)
			}
			var val []string
			closed := false
			for sc.Scan() {
				line++
				v := strings.TrimSuffix(sc.Text(), "\r")
				if v == delim {
					closed = true
					break
				}
				val = append(val, v)
			}
			if !closed {
				return nil, fmt.Errorf("actions: outputs: %s has no closing delimiter", name)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(l, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("actions: outputs line %d: want name=value or name<<DELIMITER", line)
		}
		out[name] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("actions: outputs: %w", err)
	}
	return out, nil
}
