package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/loopdetect"
)

// Outcome is outcome.json: how the agent stage ended, the one schema the
// agent job writes and publish reads (strictly). Error keeps the engine's original
// text (stderr tail and result text) for the report; Loop the repeating
// calls.
type Outcome struct {
	RunID       string           `json:"run_id"`
	JobID       string           `json:"jobid"`
	Engine      string           `json:"engine"`
	Model       string           `json:"model"`
	StartedAt   time.Time        `json:"started_at"`
	EndedAt     time.Time        `json:"ended_at"`
	Status      string           `json:"status"`  // completed | failed
	Failure     string           `json:"failure"` // "" | failed | timeout | max-turns | loop-detected | crash
	Error       string           `json:"error"`
	Turns       int              `json:"turns"`
	CostUSD     *float64         `json:"cost_usd"`
	Loop        *loopdetect.Loop `json:"loop,omitempty"`
	LoopExcerpt string           `json:"loop_excerpt,omitempty"`
	Outputs     int              `json:"outputs"`     // entries queued in outputs.jsonl
	Deliverable bool             `json:"deliverable"` // at least one write or a noop was queued
	// Local is set when the agent job's own machine could not write a file
	// (full disk, read-only run directory, missing or unwritable outputs
	// file): publish reports that, not an engine error.
	Local *localfs.Failure `json:"local_failure,omitempty"`
}

// Failed reports whether the run failed.
func (o *Outcome) Failed() bool { return o.Status != contract.StatusCompleted }

// WriteOutcome writes dir/outcome.json, redacted, replacing it whole.
func WriteOutcome(dir string, o Outcome) error { return WriteOutcomeFS(nil, dir, o) }

// WriteOutcomeFS is WriteOutcome through fsys (nil = the OS).
func WriteOutcomeFS(fsys localfs.FS, dir string, o Outcome) error {
	if err := WriteJSONFS(fsys, filepath.Join(dir, contract.OutcomeFile), o); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	return nil
}

// ReadOutcome reads dir/outcome.json strictly.
func ReadOutcome(dir string) (Outcome, error) {
	var o Outcome
	data, err := os.ReadFile(filepath.Join(dir, contract.OutcomeFile))
	if err != nil {
		return o, fmt.Errorf("read outcome: %w", err)
	}
	if err := decodeStrict(contract.OutcomeFile, data, &o); err != nil {
		return o, err
	}
	if o.Status != contract.StatusCompleted && o.Status != contract.StatusFailed {
		return o, errors.New("read " + contract.OutcomeFile + ": status must be completed or failed")
	}
	return o, nil
}
