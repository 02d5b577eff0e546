package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// finish ends the run: the deliverable check, run.completed or run.failed,
// then session.json, run.json, outcome.json and transcript.md — on every
// path, so the publish job always finds them.
func (r *run) finish(failure string, ferr error) (*record.Outcome, string, error) {
	if failure == "" && ferr != nil {
		failure = contract.CauseFailed
	}
	if r.builder != nil {
		r.checkDeliverables()
	}
	r.out.EndedAt = r.o.Now().UTC()
	r.out.Failure = failure
	if ferr != nil {
		r.out.Error = ferr.Error()
	}
	if l := r.loop.Loop(); l != nil && failure == contract.CauseLoop {
		r.out.Loop, r.out.LoopExcerpt = l, l.Excerpt()
	}
	if len(r.problems) > 0 && failure == "" {
		// a record that could not be written is not a run to trust
		r.out.Failure = contract.CauseFailed
		r.out.Error = "the run record could not be written: " + errors.Join(r.problems...).Error()
	}
	r.out.Local = localFailure(ferr, r.problems)
	if r.out.Local != nil {
		if r.out.Failure == "" {
			r.out.Failure = contract.CauseFailed
		}
		r.out.Error = "local failure on the agent job's machine, " + r.out.Local.String() + "\n" + r.out.Error
	}
	r.out.Status = contract.StatusCompleted
	if r.out.Failure != "" {
		r.out.Status = contract.StatusFailed
	}

	data := map[string]any{"status": r.out.Status, "failure": r.out.Failure, "turns": r.out.Turns, "cost_usd": r.out.CostUSD,
		"outputs": r.out.Outputs, "duration_ms": r.out.EndedAt.Sub(r.out.StartedAt).Milliseconds()}
	if r.out.Failure != "" {
		r.recordError(r.out.Failure, r.out.Error, false)
		data["error"] = r.out.Error
		if r.out.LoopExcerpt != "" {
			data["loop_excerpt"] = r.out.LoopExcerpt
		}
		// the agent job's end; the run's own end (run.completed/failed) is
		// publish's, once it knows what was really written
		r.emit(contract.EventAgentFailed, "error", "agent job failed: "+r.out.Failure, data)
		r.logf("run failed (%s): %s", r.out.Failure, firstLine(r.out.Error))
	} else {
		r.emit(contract.EventAgentCompleted, record.SeverityInfo, fmt.Sprintf("agent job completed: %d turns, %d outputs queued", r.out.Turns, r.out.Outputs), data)
		r.logf("run completed: %d turns, %d outputs queued", r.out.Turns, r.out.Outputs)
	}

	var errs []error
	sess := session.Session{ID: r.sessionID, Status: session.StatusFailed, CreatedAt: r.out.StartedAt, UpdatedAt: r.out.EndedAt}
	if r.builder != nil {
		r.builder.SetStatus(SessionStatus(r.out.Failure))
		sess = r.builder.Session()
	}
	if err := record.WriteSessionJSONFS(r.o.FS, filepath.Join(r.dir, contract.SessionFile), sess); err != nil {
		errs = append(errs, err)
	}
	r.meta.EndedAt, r.meta.Status = &r.out.EndedAt, r.out.Status
	if r.meta.Model == "" {
		r.meta.Model = r.out.Model
	}
	if err := record.WriteMetaFS(r.o.FS, r.dir, r.meta); err != nil {
		errs = append(errs, err)
	}
	if err := record.WriteOutcomeFS(r.o.FS, r.dir, r.out); err != nil {
		errs = append(errs, err)
	}
	if err := r.rec.Close(); err != nil {
		errs = append(errs, err)
	}
	if loaded, err := record.LoadRun(r.dir); err != nil {
		errs = append(errs, fmt.Errorf("transcript: %w", err))
	} else if err := record.WriteTranscriptFS(r.o.FS, r.dir, loaded.Transcript()); err != nil {
		errs = append(errs, err)
	}
	out := r.out
	if len(errs) > 0 {
		return &out, r.dir, fmt.Errorf("agent: finish the run record: %w", errors.Join(errs...))
	}
	if out.Failed() {
		return &out, r.dir, &RunError{Outcome: &out, RunDir: r.dir}
	}
	return &out, r.dir, nil
}

// localFailure is the first local write failure (full disk, read-only
// run directory, missing or unwritable file) behind the run's end or its
// record problems; nil when none was local.
func localFailure(ferr error, problems []error) *localfs.Failure {
	for _, err := range append([]error{ferr}, problems...) {
		if lf := localfs.Classify(err); lf != nil {
			return lf
		}
	}
	return nil
}

// createOutputs creates the run's outputs.jsonl, empty, for the gate.
func (r *run) createOutputs() error {
	f, err := localfs.Or(r.o.FS).OpenFile(filepath.Join(r.dir, contract.OutputsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create %s for the gate: %w", contract.OutputsFile, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create %s for the gate: %w", contract.OutputsFile, err)
	}
	r.outputsCreated = true
	return nil
}

// SessionStatus is the session's status (core-types) for how the run
// ended: stopped by the runner (loop, timeout) is interrupted; a crash,
// an engine error or the turn limit is failed.
func SessionStatus(failure string) string {
	switch failure {
	case "":
		return session.StatusCompleted
	case contract.CauseLoop, contract.CauseTimeout:
		return session.StatusInterrupted
	}
	return session.StatusFailed
}

// checkDeliverables: did the agent queue at least one write or a noop?
func (r *run) checkDeliverables() {
	path := filepath.Join(r.dir, contract.OutputsFile)
	r.emit(contract.EventDeliverableStarted, record.SeverityInfo, "checking the queued writes", map[string]any{"file": contract.OutputsFile})
	entries, err := outputs.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && r.outputsCreated {
		// created before the engine started: something removed it
		r.recordError("outputs", "outputs.jsonl is missing: "+err.Error(), false)
		r.problems = append(r.problems, fmt.Errorf("read %s: %w", contract.OutputsFile, err))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.recordError("outputs", "outputs.jsonl cannot be read: "+err.Error(), false)
		r.problems = append(r.problems, fmt.Errorf("read %s: %w", contract.OutputsFile, err))
	}
	byKind := map[string]int{}
	for _, e := range entries {
		byKind[string(e.Kind)]++
	}
	r.out.Outputs = len(entries)
	r.out.Deliverable = len(entries) > 0
	if !r.out.Deliverable {
		r.emit(contract.EventDeliverableMissing, record.SeverityWarning, "the agent queued no write and did not call noop", map[string]any{"file": contract.OutputsFile})
	}
	r.emit(contract.EventDeliverableDone, record.SeverityInfo, fmt.Sprintf("%d outputs queued", len(entries)),
		map[string]any{"outputs": len(entries), "by_kind": byKind, "noop": byKind[string(outputs.KindNoop)] > 0})
}
