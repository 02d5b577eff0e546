package contract

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// MarkerNamespace starts every hidden marker mention-runner writes.
const MarkerNamespace = "mention-runner:"

// Suffixes of the marker job ids of writes publish makes on its own behalf
// (the agent's outputs use the bare jobid).
const (
	LogSuffix     = ".log"     // the run-log issue
	SessionSuffix = ".session" // a session comment on the log issue
	ErrorSuffix   = ".error"   // the error comment on the log issue
	NoticeSuffix  = ".notice"  // the notice on the trigger thread
)

// outputMarkerRE is the strict output-marker form; the job part is a jobid
// (optionally with one of the suffixes above).
// (compiled on first use: {0,127} expands to hundreds of allocations that
// every process would pay at start-up)
var outputMarkerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<!-- mention-runner:job=([A-Za-z0-9][A-Za-z0-9._-]{0,127});output=(0|[1-9][0-9]{0,8}) -->`)
})

// OutputMarker is the hidden HTML comment that ties a write to its job and
// output index, so a retried publish finds what it already wrote. A job
// outside [A-Za-z0-9._-] (1–128 characters) or a negative index would not
// parse back.
func OutputMarker(job string, index int) string {
	return "<!-- " + MarkerNamespace + "job=" + job + ";output=" + strconv.Itoa(index) + " -->"
}

// ParseOutputMarker finds the last output marker in body. The last one
// counts because the runner always appends its own after whatever the
// agent wrote.
func ParseOutputMarker(body string) (job string, index int, ok bool) {
	all := outputMarkerRE().FindAllStringSubmatch(body, -1)
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

// LogIssueMarker is the one marker of a job's run-log issue. Assemble
// writes it when it opens the issue and looks for it on a re-run; publish
// looks for it, and keeps it when it rewrites the body, so no job ever
// opens a second log issue.
func LogIssueMarker(jobID string) string { return OutputMarker(jobID+LogSuffix, 0) }

// LogIssueFinalMarker ends the body of a job's run-log issue once publish
// has finished the job: a later delivery of the job, or a re-run of the
// workflow run that ran it, reads it and stops. It is the job's "done"
// state, so that takes no write of its own.
func LogIssueFinalMarker(jobID string) string {
	return "<!-- " + MarkerNamespace + "final job=" + jobID + " -->"
}

// LogIssueFinal reports whether a run-log issue body says publish finished
// job jobID: its last line is the job's final marker (publish appends it
// after everything else, so no text quoted above it can stand there).
func LogIssueFinal(body, jobID string) bool {
	body = strings.TrimRight(body, "\r\n\t ")
	i := strings.LastIndexByte(body, '\n')
	return strings.TrimSpace(body[i+1:]) == LogIssueFinalMarker(jobID)
}

// ReplyMarker marks a reply the dispatcher posts on a trigger thread (a
// !cfg error, a rate-limit notice, an opt-out confirmation), so a retry
// finds the reply it already posted.
func ReplyMarker(kind string, commentID int64, nodeID string) string {
	return fmt.Sprintf("<!-- %sreply kind=%s comment=%d node=%s -->", MarkerNamespace, kind, commentID, nodeID)
}

// Reply kinds.
const (
	ReplyCfg      = "cfg"
	ReplyRate     = "ratelimit"
	ReplyGoAway   = "go-away"
	ReplyComeBack = "come-back"
	ReplyPrivate  = "private"
)

// PartBreak separates the parts of a long session in session.md;
// each part is one log-issue comment.
const PartBreak = "\n<!-- " + MarkerNamespace + " end of part; each part above and below is one log-issue comment -->\n\n"

// markerLikeRE finds anything a reader or a marker search could take for a
// mention-runner marker: the namespace with any case, spacing or
// punctuation between its words ("mention-runner:", "Mention_Runner :",
// "mention runner:"). Agent text carrying one is refused: it could pass
// itself off as another write.
var markerLikeRE = regexp.MustCompile(`(?i)mention[\s_\-\x{2010}-\x{2015}]*runner\s*[:=]`)

// HasMarker reports whether s carries anything that looks like a
// mention-runner marker. Zero-width and other invisible characters are
// removed first, so they cannot split the namespace.
func HasMarker(s string) bool {
	if markerLikeRE.MatchString(s) {
		return true
	}
	clean := strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
	return clean != s && markerLikeRE.MatchString(clean)
}

// invisible reports format and zero-width characters a renderer hides.
func invisible(r rune) bool {
	switch {
	case r == 0xAD, r == 0x34F, r == 0x61C, r == 0x180E:
		return true
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F:
		return true
	case r == 0xFEFF, r >= 0xFE00 && r <= 0xFE0F:
		return true
	}
	return false
}
