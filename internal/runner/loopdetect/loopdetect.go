// Package loopdetect notices an agent stuck in a loop: N identical
// consecutive tool calls, where identical means the same tool name and the
// same canonical JSON arguments (sorted keys, no whitespace). The runner
// stops the engine when it fires and keeps the excerpt for the report.
package loopdetect

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultThreshold is how many identical consecutive calls make a loop.
const DefaultThreshold = 6

// Call is one tool call as the detector saw it.
type Call struct {
	ID   string `json:"id,omitempty"`
	Tool string `json:"tool"`
	Args string `json:"arguments"` // canonical JSON
}

// Loop is what the detector found: the repeating call and every occurrence.
type Loop struct {
	Tool  string `json:"tool"`
	Args  string `json:"arguments"`
	Count int    `json:"count"`
	Calls []Call `json:"calls"`
}

// Detector counts identical consecutive tool calls. Not safe for
// concurrent use; engines deliver events from one goroutine.
type Detector struct {
	threshold int
	run       []Call // the current streak of identical calls
	loop      *Loop
}

// New returns a detector that fires at threshold identical consecutive
// calls; threshold < 2 means DefaultThreshold (one call is never a loop).
func New(threshold int) *Detector {
	if threshold < 2 {
		threshold = DefaultThreshold
	}
	return &Detector{threshold: threshold}
}

// Threshold is the number of identical calls that make a loop.
func (d *Detector) Threshold() int { return d.threshold }

// Observe records a tool call and reports whether it completes a loop. Once
// a loop was found it stays found; later calls are ignored.
func (d *Detector) Observe(id, tool string, args []byte) bool {
	if d.loop != nil {
		return true
	}
	canon, _ := Canonical(args)
	c := Call{ID: id, Tool: tool, Args: canon}
	if len(d.run) > 0 && (d.run[0].Tool != tool || d.run[0].Args != canon) {
		d.run = d.run[:0]
	}
	d.run = append(d.run, c)
	if len(d.run) < d.threshold {
		return false
	}
	d.loop = &Loop{Tool: tool, Args: canon, Count: len(d.run), Calls: append([]Call(nil), d.run...)}
	return true
}

// Loop is the loop found, or nil.
func (d *Detector) Loop() *Loop { return d.loop }

// excerptArgChars bounds the arguments shown per call in an excerpt.
const excerptArgChars = 300

// Excerpt renders the repeating calls for a person: one line per call,
// arguments cut to a few hundred characters.
func (l *Loop) Excerpt() string {
	if l == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d identical consecutive calls of %s:\n", l.Count, l.Tool)
	args := clip(l.Args, excerptArgChars)
	for i, c := range l.Calls {
		id := c.ID
		if id == "" {
			id = "(no id)"
		}
		fmt.Fprintf(&b, "%d. %s %s(%s)\n", i+1, id, c.Tool, args)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
