package render

import (
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// NoteBlock is the NOTE appended to everything the bot creates (SPEC §6,
// exact text; the second line ends with two spaces, a markdown line break).
func NoteBlock(control string, logIssue int, bot string) string {
	return fmt.Sprintf("> [!NOTE]\n> Created from %s#%d  \n> Type `@%s go away` to block %s from this repository and all repositories under your account.",
		control, logIssue, bot, bot)
}

// WithNote returns body (redacted, anything it left open closed) followed by
// a blank line, the NOTE block and the marker.
func WithNote(body, control string, logIssue int, bot, jobID string, index int) string {
	tail := NoteBlock(control, logIssue, bot) + "\n" + contract.OutputMarker(jobID, index)
	body = strings.TrimRight(balance(strings.TrimRight(redact.String(body), "\n")), "\n")
	if strings.TrimSpace(body) == "" {
		return tail
	}
	return body + "\n\n" + tail
}
