package publish

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/loopdetect"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// AgentRun is what the agent job's record says about the run. It only
// shapes the report: nothing in it widens what publish may write.
type AgentRun struct {
	Dir       string
	RunID     string
	Engine    string
	Model     string
	StartedAt *time.Time
	EndedAt   *time.Time
	Duration  time.Duration
	Status    string           // completed | failed | "" (unknown)
	Cause     string           // "" or one of the Cause* constants
	ErrorText string           // the engine's original error text
	Local     *localfs.Failure // the agent job's machine could not write a file
	Turns     int
	CostUSD   *float64
	Loop      []render.LoopCall
	Denied    int // gate denials (policy.denied events)
	Session   *session.Session
	Problems  []string // record files that could not be read
	Missing   []string // record files the agent stage writes that are not there
}

// LoadAgentRun reads the run directory with the agent job's own schemas,
// strictly: run.json (record.RunMeta) and outcome.json (record.Outcome).
// A file that does not match is noted in Problems, never guessed at: the
// report must still be written.
func LoadAgentRun(dir string) AgentRun {
	a := AgentRun{Dir: dir}
	switch meta, ok, err := record.ReadMeta(dir); {
	case err != nil:
		a.Problems = append(a.Problems, err.Error())
	case !ok:
		a.Problems = append(a.Problems, contract.MetaFile+": missing")
		a.Missing = append(a.Missing, contract.MetaFile)
	default:
		a.RunID, a.Engine, a.Model, a.StartedAt, a.EndedAt, a.Status = meta.RunID, meta.Engine, meta.Model, meta.StartedAt, meta.EndedAt, meta.Status
	}
	// outcome.json (written by the agent stage beside run.json) says how the
	// run ended; without it, the events decide
	var failure string
	var loop *loopdetect.Loop
	switch o, err := record.ReadOutcome(dir); {
	case errors.Is(err, os.ErrNotExist):
		a.Missing = append([]string{contract.OutcomeFile}, a.Missing...)
	case err != nil:
		a.Problems = append(a.Problems, err.Error())
	default:
		a.Status, failure, a.ErrorText, a.Turns, a.CostUSD, loop = o.Status, o.Failure, o.Error, o.Turns, o.CostUSD, o.Loop
		a.Local = o.Local
		a.RunID, a.Engine, a.Model = cmp.Or(a.RunID, o.RunID), cmp.Or(o.Engine, a.Engine), cmp.Or(o.Model, a.Model)
		if a.StartedAt == nil && !o.StartedAt.IsZero() {
			a.StartedAt = &o.StartedAt
		}
		if !o.EndedAt.IsZero() {
			a.EndedAt = &o.EndedAt
		}
	}
	if a.Status != contract.StatusCompleted && a.Status != contract.StatusFailed {
		a.Status = "" // running or unknown: the events may say how it ended
	}
	a.readEvents(dir)
	a.Cause = classify(a.Status, failure)
	if a.StartedAt != nil && a.EndedAt != nil && a.EndedAt.After(*a.StartedAt) {
		a.Duration = a.EndedAt.Sub(*a.StartedAt)
	}
	if a.Cause == contract.CauseLoop {
		a.Loop = loopCalls(loop, dir)
	}
	if s, err := record.ReadSession(dir); err != nil {
		a.Problems = append(a.Problems, err.Error())
	} else {
		a.Session = s
	}
	return a
}

// recordUnwritten is the local failure publish reports when the agent
// stage ran, failed, and left no outcome.json.
const recordUnwritten = "the agent stage failed before it could write them (a full disk or a read-only run directory; the agent job's log has the error)"

// CrossCheck weighs the record against what GitHub says about the agent
// job, which the job's files (written where the agent ran) cannot change.
// It only ever makes the report say "failed": a record that says
// completed for a job GitHub saw fail is not believed; and a stage that
// started (its step output, set before it wrote anything), failed, and
// left no outcome.json could not write its record: a local failure, named
// by the files that are missing, not an engine error. Without GitHub's
// word (zero job) nothing changes.
func (a *AgentRun) CrossCheck(job AgentJob) {
	if job.Result == "" || job.Result == contract.AgentJobSuccess {
		return
	}
	if a.Status == contract.StatusCompleted {
		msg := fmt.Sprintf("the agent job ended as %q on GitHub, but its record says completed: the record is not believed", job.Result)
		a.Problems = append(a.Problems, msg)
		a.Status, a.Cause, a.ErrorText = contract.StatusFailed, contract.CauseFailed, cmp.Or(a.ErrorText, msg)
	}
	if job.Result != contract.AgentJobFailure || job.Stage != contract.AgentStageStarted || !slices.Contains(a.Missing, contract.OutcomeFile) || a.Local != nil {
		return
	}
	paths := make([]string, len(a.Missing))
	for i, f := range a.Missing {
		paths[i] = filepath.Join(a.Dir, f)
	}
	a.Local = &localfs.Failure{What: recordUnwritten, Path: strings.Join(paths, "`, `"), Op: "write", Err: "missing from the agent job's record"}
	a.Status, a.Cause = contract.StatusFailed, contract.CauseFailed
}

// readEvents fills what run.json lacks from events.jsonl: status, turns,
// cost and duration from the engine's result, and the gate's denials.
func (a *AgentRun) readEvents(dir string) {
	events, torn, err := record.ScanEvents(filepath.Join(dir, contract.EventsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.EventsFile, err))
	}
	if torn != nil {
		a.Problems = append(a.Problems, fmt.Sprintf("%s: %s", contract.EventsFile, torn))
	}
	status := ""
	for _, e := range events {
		switch e.Type {
		case contract.EventPolicyDenied:
			a.Denied++
		case contract.EventRunCompleted, contract.EventAgentCompleted:
			status = "completed"
		case contract.EventRunFailed, contract.EventAgentFailed:
			status = "failed"
		case contract.EventEngineResult:
			var d struct {
				NumTurns   int      `json:"num_turns"`
				DurationMS int64    `json:"duration_ms"`
				Cost       *float64 `json:"total_cost_usd"`
			}
			if json.Unmarshal(e.Data, &d) == nil {
				if a.Turns == 0 {
					a.Turns = d.NumTurns
				}
				if a.CostUSD == nil {
					a.CostUSD = d.Cost
				}
				if a.Duration == 0 {
					a.Duration = time.Duration(d.DurationMS) * time.Millisecond
				}
			}
		}
	}
	if a.Status == "" {
		a.Status = status
	}
}

// classify maps the agent's status and failure (contract causes) to the
// cause publish reports. Anything not clearly a success is a failure: an
// unknown status or failure never reads as success.
func classify(status, failure string) string {
	switch failure {
	case "":
	case contract.CauseLoop, contract.CauseTimeout, contract.CauseMaxTurns, contract.CauseCrash, contract.CauseBudget:
		return failure
	default:
		return contract.CauseFailed
	}
	if status == contract.StatusCompleted {
		return ""
	}
	return contract.CauseFailed
}

// loopCalls is the loop the agent stage recorded; failing that, the
// trailing streak of identical calls in logs/tools.jsonl.
func loopCalls(l *loopdetect.Loop, dir string) []render.LoopCall {
	if l != nil && l.Tool != "" {
		return []render.LoopCall{{Tool: l.Tool, Args: l.Args, Count: l.Count}}
	}
	tools, _, err := record.ReadTools(filepath.Join(dir, contract.ToolsFile))
	if err != nil || len(tools) == 0 {
		return nil
	}
	last := tools[len(tools)-1]
	want, _ := loopdetect.Canonical(last.Arguments)
	n := 0
	for i := len(tools) - 1; i >= 0; i-- {
		c, _ := loopdetect.Canonical(tools[i].Arguments)
		if tools[i].Name != last.Name || c != want {
			break
		}
		n++
	}
	return []render.LoopCall{{Tool: last.Name, Args: want, Count: n}}
}
