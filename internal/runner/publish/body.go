package publish

import (
	"fmt"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// MaxTitleChars is GitHub's limit on an issue or PR title.
const MaxTitleChars = 256

// noted is what WithNote needs besides the body.
type noted struct {
	control  string
	logIssue int
	bot      string
	jobID    string
}

// withNote returns the body with the NOTE block and marker, cut (never
// refused) when the whole would pass GitHub's limit; the cut says where
// the full text is.
func (n noted) withNote(body string, index int) string {
	out := render.WithNote(body, n.control, n.logIssue, n.bot, n.jobID, index)
	if utf8.RuneCountInString(out) <= contract.GitHubBodyChars {
		return out
	}
	runes := []rune(body)
	over := utf8.RuneCountInString(out) - contract.GitHubBodyChars
	for keep := len(runes) - over - 400; keep > 0; keep -= 1000 {
		note := fmt.Sprintf("\n\n… cut %d characters (GitHub's 65,536-character limit); the full text is in the run artifact of %s#%d", len(runes)-keep, n.control, n.logIssue)
		out = render.WithNote(string(runes[:keep])+note, n.control, n.logIssue, n.bot, n.jobID, index)
		if utf8.RuneCountInString(out) <= contract.GitHubBodyChars {
			return out
		}
	}
	return render.WithNote("(the text was too long to post; it is in the run artifact)", n.control, n.logIssue, n.bot, n.jobID, index)
}

// cutTitle keeps a title within GitHub's limit.
func cutTitle(s string) string {
	if utf8.RuneCountInString(s) <= MaxTitleChars {
		return s
	}
	return string([]rune(s)[:MaxTitleChars-1]) + "…"
}
