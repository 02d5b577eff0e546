package publish

import (
	"strings"

	"github.com/mention-runner/mention-runner/internal/redact"
	"github.com/mention-runner/mention-runner/internal/render"
)

// Headings of the error sections. The runtime and loop headings are
// SPEC §6's exact text (render writes them); the others follow their form.
const (
	HeadingTimeout  = "## Error: Timeout"
	HeadingMaxTurns = "## Error: Max Turns Reached"
	HeadingNoRecord = "## Error: Agent Produced No Record"
	HeadingPublish  = "## Error: Publish Problems"
)

// maxErrorText keeps the engine text of a timeout or max-turns section
// well under a comment's limit.
const maxErrorText = 20000

// errorSections is the error comment on the log issue, "" when there is
// nothing to report. Gate denials are not errors and never appear here.
func errorSections(run AgentRun, res *Result, o Options) string {
	var secs []string
	problems := res.Problems
	if o.RunDir == "" {
		reason := o.NoRecordReason
		if reason == "" {
			reason = ErrNoRecord.Error()
		}
		secs = append(secs, HeadingNoRecord+"\n\nThe agent job left no run record (events, session, outputs), so nothing it may have asked for was published.\n\n"+fence(reason))
		if len(problems) > 0 {
			problems = problems[1:] // the first problem is this one
		}
	}
	switch run.Cause {
	case CauseLoop:
		secs = append(secs, render.ErrorLoop(run.Loop))
	case CauseTimeout:
		secs = append(secs, HeadingTimeout+"\n\nThe engine was stopped at the run's wall-clock limit (MR_TIMEOUT)."+engineText(run.ErrorText))
	case CauseMaxTurns:
		secs = append(secs, HeadingMaxTurns+"\n\nThe engine used every turn it was allowed (MR_MAX_TURNS) before finishing."+engineText(run.ErrorText))
	case CauseFailed:
		text := run.ErrorText
		if strings.TrimSpace(text) == "" {
			text = "(the engine reported no error text; status " + first(run.Status, "unknown") + ")"
		}
		secs = append(secs, render.ErrorRuntime(text))
	}
	if len(problems) > 0 {
		var b strings.Builder
		b.WriteString(HeadingPublish + "\n\n")
		for _, p := range problems {
			b.WriteString("- " + oneLine(redact.String(p)) + "\n")
		}
		secs = append(secs, b.String())
	}
	for i, s := range secs {
		secs[i] = strings.TrimRight(s, "\n") + "\n"
	}
	return redact.String(strings.Join(secs, "\n"))
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
