package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/redact"
)

// NoteBlock is the NOTE appended to everything the bot creates (SPEC §6,
// exact text; the second line ends with two spaces, a markdown line break).
func NoteBlock(control string, logIssue int, bot string) string {
	return fmt.Sprintf("> [!NOTE]\n> Created from %s#%d  \n> Type `@%s go away` to block %s from this repository and all repositories under your account.",
		control, logIssue, bot, bot)
}

// markerRE is the strict marker format; jobID must match jobIDPattern.
var markerRE = regexp.MustCompile(`<!-- mention-runner:job=([A-Za-z0-9][A-Za-z0-9._-]{0,127});output=(0|[1-9][0-9]{0,8}) -->`)

// Marker is the hidden HTML comment that ties a write to its job and output
// index, so a retried publish finds what it already wrote. A jobID outside
// [A-Za-z0-9._-] (1–128 characters) or a negative index would not parse back.
func Marker(jobID string, index int) string {
	return "<!-- mention-runner:job=" + jobID + ";output=" + strconv.Itoa(index) + " -->"
}

// ParseMarker finds the last marker in body. The last one counts because
// the runner always appends its own after whatever the agent wrote.
func ParseMarker(body string) (jobID string, index int, ok bool) {
	all := markerRE.FindAllStringSubmatch(body, -1)
	if len(all) == 0 {
		return "", 0, false
	}
	m := all[len(all)-1]
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0, false
	}
	return m[1], n, true
}

// WithNote returns body (redacted, anything it left open closed) followed by
// a blank line, the NOTE block and the marker.
func WithNote(body, control string, logIssue int, bot, jobID string, index int) string {
	tail := NoteBlock(control, logIssue, bot) + "\n" + Marker(jobID, index)
	body = strings.TrimRight(balance(strings.TrimRight(redact.String(body), "\n")), "\n")
	if strings.TrimSpace(body) == "" {
		return tail
	}
	return body + "\n\n" + tail
}
