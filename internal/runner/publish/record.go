package publish

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// openRecord continues the run record the agent job (and assemble) wrote,
// so publish's decisions and writes join the same timeline. Without one
// publish still reports; the record just ends where the agent left it.
func (p *publisher) openRecord() {
	if p.o.RunDir == "" {
		return
	}
	rec, err := record.Resume(p.o.RunDir, p.o.Now)
	if err != nil {
		p.logf("the run record cannot be continued: %v", err)
		return
	}
	p.rec = rec
}

// event appends one publish event; a failure is logged, never fatal: the
// writes and the report matter more than their record.
func (p *publisher) event(typ, severity, summary string, data map[string]any) {
	if p.rec == nil {
		return
	}
	if _, err := p.rec.Emit(typ, "publish", severity, summary, data); err != nil {
		p.logf("record: %v", err)
		p.rec.Close()
		p.rec = nil
	}
}

// recordPlan records the re-check: what will be written, what is refused,
// which entries are noops.
func (p *publisher) recordPlan(plan Plan, entries int) {
	p.event(contract.EventPublishStarted, record.SeverityInfo,
		fmt.Sprintf("publishing: %d outputs re-checked, %d to write, %d refused, %d noop", entries, len(plan.Writes), len(plan.Refused), len(plan.Noops)),
		map[string]any{"log_issue": p.res.LogIssue, "outputs": entries, "writes": len(plan.Writes), "refused": len(plan.Refused), "noops": len(plan.Noops),
			"policy": policyFlags(p.pol, p.polErr)})
	for _, f := range plan.Refused {
		p.refusedEvent(f)
	}
	for _, e := range plan.Noops {
		p.event(contract.EventOutputNoop, record.SeverityInfo, fmt.Sprintf("output %d: the agent wrote nothing on purpose", e.Index),
			map[string]any{"index": e.Index, "reason": e.Reason})
	}
}

func (p *publisher) refusedEvent(f render.Refusal) {
	p.event(contract.EventOutputRefused, record.SeverityInfo, fmt.Sprintf("output %d refused by %s", f.Index, f.Rule),
		map[string]any{"index": f.Index, "kind": f.Kind, "repo": f.Repo, "rule": f.Rule, "reason": f.Reason})
}

func (p *publisher) writtenEvent(w Written) {
	verb := "written"
	if w.Existing {
		verb = "found already written"
	}
	what := fmt.Sprintf("output %d", w.Index)
	if w.Index < 0 {
		what = "no-write notice"
	}
	shown := w.URL
	if w.Kind == policy.KindLabels {
		shown = render.LabelChange(w.Repo, w.Number, w.Added, w.Removed)
	}
	if w.Kind == policy.KindPush {
		shown = render.PushedCommit(w.Repo, w.SHA, w.Number)
	}
	p.event(contract.EventOutputWritten, record.SeverityInfo, fmt.Sprintf("%s %s: %s", what, verb, shown),
		writtenData(w))
}

func writtenData(w Written) map[string]any {
	d := map[string]any{"index": w.Index, "kind": w.Kind, "repo": w.Repo, "number": w.Number, "url": w.URL, "existing": w.Existing, "head_repo": w.HeadRepo}
	if w.Kind == policy.KindPush {
		d["sha"] = w.SHA
	}
	if w.Kind == policy.KindLabels {
		d["added"], d["removed"] = nonNil(w.Added), nonNil(w.Removed)
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// recordOutcome is the run's one final status, as the log issue and its
// label will show it.
func (p *publisher) recordOutcome() {
	data := map[string]any{"status": p.res.Status, "cause": p.res.Cause, "reason": p.res.Reason,
		"written": len(p.res.Written), "refused": len(p.res.Refused), "log_issue": p.res.LogIssue}
	if p.res.Status == statusCompleted {
		p.event(contract.EventRunCompleted, record.SeverityInfo, fmt.Sprintf("run completed: %d written, %d refused", len(p.res.Written), len(p.res.Refused)), data)
		return
	}
	p.event(contract.EventRunFailed, record.SeverityError, "run failed: "+cmp.Or(p.res.Reason, p.res.Cause), data)
}

const statusCompleted = "completed"

// finishRecord ends the record: the report event, then run.json with what
// was really written, outcome.json and session.json with the final status,
// and transcript.md rebuilt from them all.
func (p *publisher) finishRecord(r render.Report, sessionParts, errorParts int) error {
	if p.rec == nil {
		return nil
	}
	state := "open, labelled " + p.res.Cause
	if p.res.Status == statusCompleted {
		state = "closed as completed"
	}
	p.event(contract.EventPublishReported, record.SeverityInfo, fmt.Sprintf("log issue %s#%d updated (%s); %d session and %d error comments", p.o.ControlRepo, p.res.LogIssue, state, sessionParts, errorParts),
		map[string]any{"log_issue": p.res.LogIssue, "status": p.res.Status, "label": p.res.Cause, "session_comments": sessionParts, "error_comments": errorParts,
			"record_artifact": contract.RecordArtifactPrefix + p.job.JobID})
	dir := p.o.RunDir
	var errs []error
	if err := p.rec.Close(); err != nil {
		errs = append(errs, err)
	}
	p.rec = nil
	meta, _, err := record.ReadMeta(dir)
	if err != nil {
		errs = append(errs, err)
	}
	end := p.o.Now().UTC()
	meta.Deliverables, meta.Status, meta.EndedAt = r.Tracking(), p.res.Status, &end
	if err := record.WriteMeta(dir, meta); err != nil {
		errs = append(errs, err)
	}
	if err := finalOutcome(dir, p.res.Status, p.res.Cause); err != nil {
		errs = append(errs, err)
	}
	if err := finalSession(dir, p.res.Status); err != nil {
		errs = append(errs, err)
	}
	if run, err := record.LoadRun(dir); err != nil {
		errs = append(errs, err)
	} else if err := record.WriteTranscript(dir, run.Transcript()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// finalOutcome sets outcome.json's status (and, when the agent's own run
// went well, its failure) to the run's final ones, keeping everything else.
func finalOutcome(dir, status, cause string) error {
	path := filepath.Join(dir, contract.OutcomeFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("final outcome: %w", err)
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(data, &o); err != nil {
		return fmt.Errorf("final outcome: %s: %w", contract.OutcomeFile, err)
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	o["status"] = str(status)
	if failure := string(bytes.Trim(o["failure"], `"`)); failure == "" && cause != "" {
		o["failure"] = str(cause)
	}
	if err := record.WriteJSON(path, o); err != nil {
		return fmt.Errorf("final outcome: %w", err)
	}
	return nil
}

// finalSession marks a session that ended well as failed when the run
// failed after it (nothing written, a write that failed): session.json
// then agrees with the events and the log issue.
func finalSession(dir, status string) error {
	path := filepath.Join(dir, contract.SessionFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("final session: %w", err)
	}
	var s session.Session
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("final session: %s: %w", contract.SessionFile, err)
	}
	if status == statusCompleted || s.Status != session.StatusCompleted {
		return nil
	}
	s.Status = session.StatusFailed
	return record.WriteSessionJSON(path, s)
}
