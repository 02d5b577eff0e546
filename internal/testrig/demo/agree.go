package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// CheckAgreement checks that the complete record the last publish left and
// the log issue tell one final status: the events' run.completed or
// run.failed, outcome.json, run.json, transcript.md, session.json, the
// log issue's state, Status line and label.
func CheckAgreement(f *Flow, is *github.Issue) error {
	dir := f.FinalRecordDir
	if dir == "" {
		return errors.New("agreement: publish left no record")
	}
	evs, err := record.ReadEvents(filepath.Join(dir, contract.EventsFile))
	if err != nil {
		return fmt.Errorf("agreement: %w", err)
	}
	if len(evs) == 0 || evs[0].Sequence != 1 {
		return errors.New("agreement: events do not start at sequence 1")
	}
	status, cause, n := "", "", 0
	for _, e := range evs {
		if e.Type != contract.EventRunCompleted && e.Type != contract.EventRunFailed {
			continue
		}
		n++
		var d struct{ Status, Cause string }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("agreement: %s data: %w", e.Type, err)
		}
		status, cause = d.Status, d.Cause
		if want := strings.TrimPrefix(e.Type, "run."); status != want {
			return fmt.Errorf("agreement: %s says status %q", e.Type, status)
		}
	}
	if n != 1 {
		return fmt.Errorf("agreement: %d run.completed/run.failed events, want exactly one", n)
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	var files struct {
		Outcome struct{ Status, Failure string }
		Run     struct{ Status string }
		Session struct{ Status string }
	}
	for name, v := range map[string]any{contract.OutcomeFile: &files.Outcome, contract.MetaFile: &files.Run, contract.SessionFile: &files.Session} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			bad("%v", err)
			continue
		}
		if err := json.Unmarshal(data, v); err != nil {
			bad("%s: %v", name, err)
		}
	}
	if files.Outcome.Status != status {
		bad("outcome.json says %q, the events %q", files.Outcome.Status, status)
	}
	if files.Run.Status != status {
		bad("run.json says %q, the events %q", files.Run.Status, status)
	}
	if (files.Session.Status == "completed") != (status == "completed") {
		bad("session.json says %q, the events %q", files.Session.Status, status)
	}
	transcript, err := os.ReadFile(filepath.Join(dir, contract.TranscriptFile))
	if err != nil {
		bad("%v", err)
	} else if !strings.Contains(string(transcript), "\n- Status: "+status+"\n") {
		bad("transcript.md does not say Status: %s", status)
	}
	if (is.GetState() == "closed") != (status == "completed") {
		bad("the log issue is %s, the events say %q", is.GetState(), status)
	}
	wantLine := "**Status:** " + status
	if cause != "" && cause != status {
		wantLine += " (" + cause + ")"
	}
	if !strings.Contains(is.GetBody(), wantLine+"\n") {
		bad("the log issue body lacks %q", wantLine)
	}
	if cause != "" && !hasLabel(is, cause) {
		bad("the log issue lacks the label %q", cause)
	}
	if status == "completed" {
		for _, l := range is.Labels {
			if l.GetName() != "mention-runner" {
				bad("a completed run's log issue has the label %q", l.GetName())
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("agreement: %s", strings.Join(problems, "; "))
	}
	return nil
}
