package render

import (
	"strings"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// MaxStepSummaryBytes stays under GitHub's 1 MiB step summary limit.
const MaxStepSummaryBytes = 1000000

const summaryCutLine = "… the session is cut here: a step summary is limited to 1 MiB; the full record is in the run artifact\n"

// StepSummary is the job's step summary: the log issue body and the session
// parts, cut with a note when it would pass MaxStepSummaryBytes.
func StepSummary(r Report, sessionParts []string) string {
	var b strings.Builder
	b.WriteString(LogIssueBody(r))
	for _, p := range sessionParts {
		p = redact.String(p)
		if b.Len()+1+len(p) <= MaxStepSummaryBytes-len(summaryCutLine)-1 {
			b.WriteString("\n" + p)
			continue
		}
		room := MaxStepSummaryBytes - b.Len() - len(summaryCutLine) - 2
		kept, _ := closeOpen(p, room)
		b.WriteString("\n" + kept + "\n" + summaryCutLine)
		break
	}
	out := b.String()
	if len(out) > MaxStepSummaryBytes { // only when the body alone is huge
		kept, _ := closeOpen(out, MaxStepSummaryBytes-len(summaryCutLine)-1)
		out = kept + "\n" + summaryCutLine
	}
	return out
}

// closeOpen cuts markdown to at most room bytes and closes the code fence,
// HTML comment and <details> blocks the cut left open.
func closeOpen(s string, room int) (string, int) {
	for keep := room; keep > 0; {
		kept := cutBytes(s, keep)
		out := balance(kept)
		if n := strings.Count(out, "<details>") - strings.Count(out, "</details>"); n > 0 {
			if !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			out += strings.Repeat("\n</details>\n", n)
		}
		if len(out) <= room {
			return out, len(kept)
		}
		keep -= len(out) - room + 16
	}
	return "", 0
}

// cutPiece shortens a rendered piece to at most room bytes as a last
// resort, saying how much went.
func cutPiece(p string, room int) string {
	noteRoom := len(CutNote(len(p))) + len(" (GitHub's size limit)\n") + 2
	kept, n := closeOpen(p, room-noteRoom)
	removed := utf8.RuneCountInString(p[n:])
	if !strings.HasSuffix(kept, "\n") && kept != "" {
		kept += "\n"
	}
	return kept + "\n" + CutNote(removed) + " (GitHub's size limit)\n"
}
