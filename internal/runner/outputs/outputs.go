// Package outputs is outputs.jsonl: the writes the agent asked for through
// the gate, in order. The gate appends; the publish job reads and decides
// every entry again, so nothing here is trusted on its own.
package outputs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// Entry is one queued write.
type Entry struct {
	Index  int         `json:"index"`
	Kind   policy.Kind `json:"kind"` // comment | issue | pull_request | review | push | labels | noop
	Repo   string      `json:"repo"`
	Number int         `json:"number,omitempty"` // comment: the issue/PR
	Title  string      `json:"title,omitempty"`
	Body   string      `json:"body"`
	Labels []string    `json:"labels,omitempty"`
	// pull requests and pushes (a push's HeadSHA is its one commit, on
	// top of the pull request's recorded head)
	Base    string `json:"base,omitempty"`
	Draft   bool   `json:"draft,omitempty"`
	Bundle  string `json:"bundle,omitempty"` // file name in the run dir
	HeadSHA string `json:"head_sha,omitempty"`
	Commits int    `json:"commits,omitempty"`
	// reviews: the inline comments (Body is the review's summary)
	Comments []ReviewComment `json:"comments,omitempty"`
	// labels: Labels are removed instead of added
	Remove bool `json:"remove,omitempty"`
	// noop carries the agent's reason for writing nothing
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// KindNoop records that the agent decided, on purpose, to write nothing.
const KindNoop policy.Kind = "noop"

// Action is the policy action this entry asks for (noop has none).
func (e Entry) Action() (policy.Action, bool) {
	if e.Kind == KindNoop {
		return policy.Action{}, false
	}
	a := policy.Action{Kind: e.Kind, Repo: e.Repo, Number: e.Number}
	if e.Kind == policy.KindLabels {
		a.Changes = len(e.Labels)
	}
	return a, true
}

// ReviewComment is one inline comment of a review: on Line of Path (a
// range from StartLine when set), on Side (RIGHT, the head's lines, when
// empty; LEFT, the base's).
type ReviewComment struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	StartLine int    `json:"start_line,omitempty"`
	Side      string `json:"side,omitempty"`
	Body      string `json:"body"`
}

// Queue appends entries to outputs.jsonl. Safe for concurrent use.
type Queue struct {
	mu   sync.Mutex
	path string
	next int
}

// OpenQueue opens (or creates) the queue at path and continues its numbering.
func OpenQueue(path string) (*Queue, error) {
	es, err := ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return &Queue{path: path, next: len(es)}, nil
}

// Append assigns the next index and writes e as one line with a single
// write, synced, so a crash never leaves half an entry behind.
func (q *Queue) Append(e Entry) (Entry, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e.Index = q.next
	line, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("outputs: encode entry %d: %w", e.Index, err)
	}
	f, err := os.OpenFile(q.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return e, fmt.Errorf("outputs: open %s: %w", q.path, err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return e, fmt.Errorf("outputs: write entry %d: %w", e.Index, err)
	}
	if err := f.Sync(); err != nil {
		return e, fmt.Errorf("outputs: sync entry %d: %w", e.Index, err)
	}
	q.next++
	return e, nil
}

// ReadFile reads a queue file.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read parses outputs.jsonl. Every line must be one entry whose index is its
// position: a gap, a reorder or a torn line means the file was tampered with
// or cut, and the publish job must not guess.
func Read(r io.Reader) ([]Entry, error) {
	br := bufio.NewReader(r)
	var out []Entry
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err == io.EOF {
				return out, fmt.Errorf("outputs: line %d is not terminated (torn write)", n)
			}
			var e Entry
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&e); derr != nil {
				return out, fmt.Errorf("outputs: line %d: %w", n, derr)
			}
			if e.Index != len(out) {
				return out, fmt.Errorf("outputs: line %d has index %d, want %d", n, e.Index, len(out))
			}
			out = append(out, e)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("outputs: read: %w", err)
		}
	}
}

// PushMessage is a pushed commit's message, made by the gate and again by
// publish: the agent's line and the output's marker, by which a retried
// publish knows the commit on the branch for its own.
func PushMessage(title, jobID string, index int) string {
	return strings.TrimSpace(title) + "\n\n" + contract.OutputMarker(jobID, index) + "\n"
}
