package publish

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// Headings of the error sections. The runtime and loop headings are
// SPEC §6's exact text (render writes them); the others follow their form.
const (
	HeadingTimeout  = "## Error: Timeout"
	HeadingMaxTurns = "## Error: Max Turns Reached"
	HeadingBudget   = "## Error: Cost Budget Reached"
	HeadingNoRecord = "## Error: Agent Produced No Record"
	HeadingPublish  = "## Error: Publish Problems"
	HeadingNoWrite  = "## Error: Nothing Written"
	HeadingStorage  = "## Error: Runner Storage Error"
)

// maxErrorText keeps the engine text of a timeout or max-turns section
// well under a comment's limit.
const maxErrorText = 20000

// errorComment is one error comment on the log issue: one per cause, so
// a failure reads as what it is and nothing is stacked under it.
type errorComment struct {
	index int // its marker index under the job's ".error" key
	body  string
}

// Marker indices of the error comments.
const (
	errorIndexCause    = 0 // the run's cause: runtime error, loop, timeout, turn limit
	errorIndexNoRecord = 1
	errorIndexPublish  = 2 // writes that failed while publishing
)

// errorComments are the error comments on the log issue, none when there
// is nothing to report. Gate denials are not errors and never appear here.
func errorComments(run AgentRun, res *Result, o Options) []errorComment {
	var out []errorComment
	add := func(i int, s string) {
		out = append(out, errorComment{index: i, body: redact.String(strings.TrimRight(s, "\n") + "\n")})
	}
	if o.RunDir == "" {
		reason := o.NoRecordReason
		if reason == "" {
			reason = ErrNoRecord.Error()
		}
		add(errorIndexNoRecord, HeadingNoRecord+"\n\nThe agent job left no run record (events, session, outputs), so nothing it may have asked for was published.\n\n"+fence(reason))
	}
	switch {
	case run.Local != nil && run.Cause != "":
		lf := run.Local
		add(errorIndexCause, HeadingStorage+"\n\nThe agent job's machine could not write `"+lf.Path+"`: "+lf.What+
			" ("+lf.Op+": "+lf.Err+"). This is a local failure, not an engine error: "+storageFix(lf)+", then re-run the job."+engineText(run.ErrorText))
	case run.Cause == contract.CauseLoop:
		add(errorIndexCause, render.ErrorLoop(run.Loop))
	case run.Cause == contract.CauseTimeout:
		add(errorIndexCause, HeadingTimeout+"\n\nThe engine was stopped at the run's wall-clock limit (MR_TIMEOUT)."+engineText(run.ErrorText))
	case run.Cause == contract.CauseMaxTurns:
		add(errorIndexCause, HeadingMaxTurns+"\n\nThe engine used every turn it was allowed (MR_MAX_TURNS) before finishing."+engineText(run.ErrorText))
	case run.Cause == contract.CauseBudget:
		add(errorIndexCause, HeadingBudget+"\n\nThe engine spent the run's cost budget (MR_MAX_BUDGET_USD) before finishing."+engineText(run.ErrorText))
	case run.Cause == contract.CauseFailed || run.Cause == contract.CauseCrash:
		if res.NothingWritten && run.Status == "completed" {
			add(errorIndexCause, HeadingNoWrite+"\n\nThe agent finished without asking for any write and without calling `noop` to say why, so the run counts as failed.")
			break
		}
		text := run.ErrorText
		if strings.TrimSpace(text) == "" {
			text = "(the engine reported no error text; status " + cmp.Or(run.Status, "unknown") + ")"
		}
		if what := storageFailure(text); what != "" {
			add(errorIndexCause, HeadingStorage+"\n\nThe agent job's machine could not write its files ("+what+"): this is not an engine error. Free space on the runner or make the run directory writable, then re-run the job."+engineText(text))
			break
		}
		add(errorIndexCause, render.ErrorRuntimeFor(cmp.Or(run.Engine, o.Engine), text))
	}
	if len(res.PublishProblems) > 0 {
		var b strings.Builder
		b.WriteString(HeadingPublish + "\n\n")
		for _, p := range res.PublishProblems {
			b.WriteString("- " + oneLine(redact.String(p)) + "\n")
		}
		add(errorIndexPublish, b.String())
	}
	return out
}

// maxReasonChars bounds the log issue's one-line reason.
const maxReasonChars = 300

// failureReason is why the run failed, in one line for the log issue
// body; "" when it did not.
func failureReason(run AgentRun, res *Result, o Options) string {
	if res.Cause == "" {
		return ""
	}
	var why string
	switch {
	case run.Local != nil && run.Cause != "" && o.RunDir != "":
		why = "local failure on the agent job's machine: " + run.Local.What + ": " + run.Local.Path
	case o.RunDir == "":
		why = "the agent job left no run record: " + cmp.Or(o.NoRecordReason, ErrNoRecord.Error())
	case run.Cause == contract.CauseLoop && len(run.Loop) > 0:
		why = fmt.Sprintf("loop detected: %d identical consecutive calls of %s; the runner stopped the engine", run.Loop[0].Count, run.Loop[0].Tool)
	case run.Cause == contract.CauseLoop:
		why = "loop detected: the runner stopped the engine"
	case run.Cause == contract.CauseTimeout:
		why = "the engine ran past the wall-clock limit (MR_TIMEOUT) and was stopped"
	case run.Cause == contract.CauseMaxTurns:
		why = "the engine used every turn it was allowed (MR_MAX_TURNS): " + firstLine(run.ErrorText)
	case run.Cause == contract.CauseBudget:
		why = "the engine spent the run's cost budget (MR_MAX_BUDGET_USD): " + firstLine(run.ErrorText)
	case run.Cause == contract.CauseCrash:
		why = "the engine crashed: " + cmp.Or(firstLine(run.ErrorText), "no error text")
	case run.Cause == contract.CauseFailed:
		why = "the engine failed: " + cmp.Or(firstLine(run.ErrorText), "no error text")
	case res.NothingWritten:
		why = nothingWritten
	case len(res.PublishProblems) > 0:
		why = "publishing failed: " + firstLine(res.PublishProblems[0])
	case len(res.Problems) > 0:
		why = firstLine(res.Problems[0])
	default:
		why = res.Cause
	}
	why = oneLine(redact.String(strings.TrimRight(why, ": ")))
	if r := []rune(why); len(r) > maxReasonChars {
		why = string(r[:maxReasonChars]) + "…"
	}
	return why
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func engineText(s string) string {
	if strings.TrimSpace(s) == "" {
		return "\n"
	}
	r := []rune(strings.TrimRight(s, "\n"))
	cut := ""
	if len(r) > maxErrorText {
		cut = "\n" + render.CutNote(len(r)-maxErrorText) + "\n"
		r = r[:maxErrorText]
	}
	return " The engine said:\n\n" + fence(string(r)) + cut
}

// fence puts text, redacted and without trailing newlines, in a text code
// fence nothing inside can end.
func fence(s string) string { return render.Fenced("text", strings.TrimRight(s, "\n")) }

// storageFailures are the local failures an engine's error text can hide:
// the runner's disk, not the engine, is at fault.
var storageFailures = []struct{ text, what string }{
	{"no space left on device", "the disk is full"},
	{"disk quota exceeded", "the disk quota is used up"},
	{"read-only file system", "the run directory is on a read-only file system"},
}

// storageFix says what a person does about a local failure.
func storageFix(lf *localfs.Failure) string {
	switch {
	case lf.What == recordUnwritten:
		return "free space on the runner or make the run directory writable (the agent job's log says which)"
	case strings.Contains(lf.What, "full"), strings.Contains(lf.What, "quota"):
		return "free space on the runner"
	case strings.Contains(lf.What, "missing"):
		return "check what removed it (the agent must not touch the run directory)"
	}
	return "make the run directory writable"
}

// storageFailure names the local failure in text, "" if none.
func storageFailure(text string) string {
	low := strings.ToLower(text)
	for _, f := range storageFailures {
		if strings.Contains(low, f.text) {
			return f.what
		}
	}
	return ""
}
