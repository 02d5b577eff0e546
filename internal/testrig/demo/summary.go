package demo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// Summary is what a person needs to see after a flow, read back from the
// simulator's final state and the uploaded run record.
type Summary struct {
	JobID         string
	EventType     string
	DispatchBytes []int // request body size of each dispatch
	AssembleRuns  int
	Policy        string // effective policy words (run.json)
	AgentStatus   string
	Denials       []Denial
	LogIssue      *github.Issue
	LogComments   int                    // session and error comments on the log issue
	BotComments   []*github.IssueComment // the bot's comments on the target thread
	Reactions     []string               // on the trigger comment
	RecordDir     string
	Events        string // events.jsonl
	Transcript    string // transcript.md
	PublishOutput string // the last publish run's stdout
}

// Denial is a write the gate refused during the run.
type Denial struct {
	Tool, Rule, Reason string
}

// Summarize reads the summary; fields it cannot fill stay empty.
func (f *Flow) Summarize() (*Summary, error) {
	s := &Summary{JobID: f.JobID, AssembleRuns: len(f.Assembles)}
	for _, d := range f.Dispatches() {
		s.EventType = d.EventType
		s.DispatchBytes = append(s.DispatchBytes, len(d.Body))
	}
	if f.LogIssue > 0 {
		s.LogIssue, _ = f.w.Sim.Issue(ControlRepo, f.LogIssue)
		s.LogComments = len(f.w.Sim.Comments(ControlRepo, f.LogIssue))
	}
	for _, c := range f.w.Sim.Comments(TargetRepo, f.w.Issue) {
		if strings.EqualFold(c.GetUser().GetLogin(), BotLogin) {
			s.BotComments = append(s.BotComments, c)
		}
	}
	s.Reactions = f.w.Sim.Reactions(TargetRepo, f.w.TriggerID)
	if n := len(f.Publishes); n > 0 {
		s.PublishOutput = strings.TrimSpace(f.Publishes[n-1].Stdout)
	}
	if f.Agent != nil {
		s.AgentStatus, _ = f.agentStatus()
	}
	// The complete record publish uploaded, not the agent job's interim one
	// (whose Deliverables are still empty).
	dir := cmp.Or(f.FinalRecordDir, f.RecordDir)
	if dir == "" {
		return s, nil
	}
	s.RecordDir = dir
	s.Events = filepath.Join(dir, contract.EventsFile)
	s.Transcript = filepath.Join(dir, contract.TranscriptFile)
	meta, ok, err := record.ReadMeta(dir)
	if err != nil {
		return s, err
	}
	if ok {
		s.Policy = meta.PolicyWords
	}
	evs, err := record.ReadEvents(s.Events)
	if err != nil {
		return s, err
	}
	for _, e := range evs {
		if e.Type != contract.EventPolicyDenied {
			continue
		}
		var d struct{ Tool, Rule, Reason string }
		if json.Unmarshal(e.Data, &d) != nil {
			d.Reason = e.Summary
		}
		s.Denials = append(s.Denials, Denial(d))
	}
	return s, nil
}

func (f *Flow) agentStatus() (string, bool) {
	if f.Agent.Outputs != nil && f.Agent.Outputs["status"] != "" {
		return f.Agent.Outputs["status"], true
	}
	return fmt.Sprintf("exit %d", f.Agent.ExitCode), false
}

// Write prints the summary in sections.
func (s *Summary) Write(w io.Writer) {
	section := func(title string) { fmt.Fprintf(w, "\n== %s ==\n", title) }
	section("Dispatch")
	total := 0
	for _, n := range s.DispatchBytes {
		total += n
	}
	switch len(s.DispatchBytes) {
	case 0:
		fmt.Fprintln(w, "no dispatch was sent")
	case 1:
		fmt.Fprintf(w, "1 %s event, %d bytes; 1 assemble run\n", s.EventType, total)
	default:
		fmt.Fprintf(w, "%d %s events (%s bytes, %d in all); %d assemble runs, one proceeds\n",
			len(s.DispatchBytes), s.EventType, joinInts(s.DispatchBytes), total, s.AssembleRuns)
	}
	if s.JobID != "" {
		fmt.Fprintf(w, "job %s\n", s.JobID)
	}

	section("Effective policy")
	fmt.Fprintln(w, orNone(s.Policy))
	if s.AgentStatus != "" {
		fmt.Fprintf(w, "agent run: %s\n", s.AgentStatus)
	}

	section("Denied by the gate")
	if len(s.Denials) == 0 {
		fmt.Fprintln(w, "(none)")
	}
	for _, d := range s.Denials {
		fmt.Fprintf(w, "- %s [%s]: %s\n", d.Tool, d.Rule, d.Reason)
	}

	section("Run-log issue")
	if s.LogIssue == nil {
		fmt.Fprintln(w, "(none)")
	} else {
		state := s.LogIssue.GetState()
		if r := s.LogIssue.GetStateReason(); r != "" {
			state += " as " + r
		}
		fmt.Fprintf(w, "%s#%d %q (%s)\n%s\n\n%s\n", ControlRepo, s.LogIssue.GetNumber(), s.LogIssue.GetTitle(), state,
			s.LogIssue.GetHTMLURL(), strings.TrimSpace(s.LogIssue.GetBody()))
		fmt.Fprintf(w, "\n(+ %d comment(s) on it: the session and any errors)\n", s.LogComments)
	}

	section("Comments by @" + BotLogin + " on " + TargetRepo)
	if len(s.BotComments) == 0 {
		fmt.Fprintln(w, "(none)")
	}
	for _, c := range s.BotComments {
		fmt.Fprintf(w, "%s\n%s\n\n", c.GetHTMLURL(), strings.TrimSpace(c.GetBody()))
	}
	fmt.Fprintf(w, "reactions on the trigger comment: %s\n", orNone(strings.Join(s.Reactions, ", ")))

	section("Run record")
	if s.RecordDir == "" {
		fmt.Fprintln(w, "(the agent job left no record)")
	} else {
		fmt.Fprintf(w, "events:     %s\ntranscript: %s\n", s.Events, s.Transcript)
	}
	if s.PublishOutput != "" {
		fmt.Fprintf(w, "publish:    %s\n", s.PublishOutput)
	}
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, " + ")
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}
