package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/loopdetect"
	"github.com/mention-runner/mention-runner/internal/record"
	"github.com/mention-runner/mention-runner/internal/render"
	"github.com/mention-runner/mention-runner/internal/session"
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
	Status    string // completed | failed | "" (unknown)
	Cause     string // "" or one of the Cause* constants
	ErrorText string // the engine's original error text
	Turns     int
	CostUSD   *float64
	Loop      []render.LoopCall
	Denied    int // gate denials (policy.denied events)
	Session   *session.Session
	Problems  []string // record files that could not be read
}

// runFile is run.json, read leniently: the agent job writes
// record.RunMeta's fields plus its final status, and older or newer field
// names are accepted rather than failing the report.
type runFile struct {
	RunID       string          `json:"run_id"`
	Engine      string          `json:"engine"`
	Model       string          `json:"model"`
	StartedAt   *time.Time      `json:"started_at"`
	EndedAt     *time.Time      `json:"ended_at"`
	Status      string          `json:"status"`
	Failure     string          `json:"failure"`
	Error       string          `json:"error"`
	ErrorText   string          `json:"error_text"`
	Turns       *int            `json:"turns"`
	NumTurns    *int            `json:"num_turns"`
	CostUSD     *float64        `json:"cost_usd"`
	TotalCost   *float64        `json:"total_cost_usd"`
	Loop        json.RawMessage `json:"loop"`
	LoopExcerpt json.RawMessage `json:"loop_excerpt"`
}

// LoadAgentRun reads the run directory. Unreadable files are noted in
// Problems instead of failing: the report must still be written.
func LoadAgentRun(dir string) AgentRun {
	a := AgentRun{Dir: dir}
	var rf runFile
	if data, err := os.ReadFile(filepath.Join(dir, contract.MetaFile)); err != nil {
		a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.MetaFile, err))
	} else if err := json.Unmarshal(data, &rf); err != nil {
		a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.MetaFile, err))
	}
	// outcome.json (written by the agent stage beside run.json) says how the
	// run ended; its fields overlay run.json's.
	if data, err := os.ReadFile(filepath.Join(dir, contract.OutcomeFile)); err == nil {
		if err := json.Unmarshal(data, &rf); err != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.OutcomeFile, err))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.OutcomeFile, err))
	}
	a.RunID, a.Engine, a.Model, a.StartedAt, a.EndedAt = rf.RunID, rf.Engine, rf.Model, rf.StartedAt, rf.EndedAt
	a.Status = strings.ToLower(rf.Status)
	a.ErrorText = first(rf.ErrorText, rf.Error)
	if p := firstInt(rf.Turns, rf.NumTurns); p != nil {
		a.Turns = *p
	}
	a.CostUSD = rf.CostUSD
	if a.CostUSD == nil {
		a.CostUSD = rf.TotalCost
	}
	a.readEvents(dir)
	a.Cause = classify(a.Status, rf.Failure)
	if a.StartedAt != nil && a.EndedAt != nil && a.EndedAt.After(*a.StartedAt) {
		a.Duration = a.EndedAt.Sub(*a.StartedAt)
	}
	if a.Cause == contract.CauseLoop {
		a.Loop = loopCalls(first2(rf.Loop, rf.LoopExcerpt), dir)
	}
	if data, err := os.ReadFile(filepath.Join(dir, contract.SessionFile)); err == nil {
		var s session.Session
		if err := json.Unmarshal(data, &s); err != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.SessionFile, err))
		} else {
			a.Session = &s
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", contract.SessionFile, err))
	}
	return a
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

// classify maps the agent's status and failure to a cause. Anything not
// clearly a success is a failure: an unknown status never reads as success.
func classify(status, failure string) string {
	switch strings.ToLower(strings.ReplaceAll(failure, "_", "-")) {
	case "":
	case "loop-detected", "loop":
		return contract.CauseLoop
	case "timeout":
		return contract.CauseTimeout
	case "max-turns", "error-max-turns":
		return contract.CauseMaxTurns
	default:
		return contract.CauseFailed
	}
	if status == "completed" {
		return ""
	}
	return contract.CauseFailed
}

// loopCalls reads the loop from run.json ({tool, arguments, count} or a
// list of them); failing that, it finds the trailing streak of identical
// calls in logs/tools.jsonl.
func loopCalls(raw json.RawMessage, dir string) []render.LoopCall {
	type call struct {
		Tool  string `json:"tool"`
		Args  string `json:"arguments"`
		Count int    `json:"count"`
	}
	var one call
	if json.Unmarshal(raw, &one) == nil && one.Tool != "" {
		return []render.LoopCall{{Tool: one.Tool, Args: one.Args, Count: one.Count}}
	}
	var many []call
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		out := make([]render.LoopCall, 0, len(many))
		for _, c := range many {
			out = append(out, render.LoopCall{Tool: c.Tool, Args: c.Args, Count: c.Count})
		}
		return out
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

func first(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func first2(a, b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(a)) > 0 && string(a) != "null" {
		return a
	}
	return b
}

func firstInt(v ...*int) *int {
	for _, p := range v {
		if p != nil {
			return p
		}
	}
	return nil
}
