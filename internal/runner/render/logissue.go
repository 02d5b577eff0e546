package render

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// Report is what the run-log issue body and the step summary show.
type Report struct {
	Target         string // owner/name#n of the thread
	TargetURL      string
	TriggerAuthor  string // login, shown as a link (no @, so no ping)
	TriggerURL     string
	ServerURL      string // the web base for links built here ("" = github.com)
	WorkflowRunURL string
	Engine, Model  string
	Duration       time.Duration
	Turns          int
	CostUSD        *float64
	Status         string
	Reason         string // why the run failed, one line; "" when it did not
	RecordArtifact string // the workflow artifact with the complete run record
	PolicyWords    string // the effective policy, e.g. "comment-only comment-limit=5"
	// tracking lists (SPEC §6)
	Comments []string // full comment URLs
	Issues   []string // owner/name#n
	PRs      []string // owner/name#n
	Repos    []string // owner/name
	Pushed   []string // PushedCommit lines
	Labels   []string // LabelChange lines
	Refused  []Refusal
	Denied   int // writes the gate denied during the run
}

// Refusal is a write the publish job refused on its re-check.
type Refusal struct {
	Index            int
	Kind, Repo, Rule string
	Reason           string
}

// Tracking is the tracking lists of the log issue: the four of SPEC §6
// (comments, reviews among them, by URL), then pushed commits and label
// changes (SPEC §3a).
type Tracking struct {
	Comments []string `json:"comments"`
	Issues   []string `json:"issues"`
	PRs      []string `json:"prs"`
	Repos    []string `json:"repos"`
	Pushed   []string `json:"pushed"` // "owner/name@<sha12> (owner/name#N)"
	Labels   []string `json:"labels"` // "owner/name#N +bug -needs-triage"
}

// Tracking returns the report's lists.
func (r Report) Tracking() Tracking {
	return Tracking{Comments: r.Comments, Issues: r.Issues, PRs: r.PRs, Repos: r.Repos, Pushed: r.Pushed, Labels: r.Labels}
}

// PushedCommit is one line of the Pushed Commits list: the commit (its
// first 12 hex digits) in the repository it was pushed to, and the pull
// request whose branch it went onto.
func PushedCommit(repo, sha string, pr int) string {
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return fmt.Sprintf("%s@%s (%s#%d)", repo, sha, repo, pr)
}

// LabelChange is one line of the Label Changes list: "+name" for each
// label added, "-name" for each removed. A name of anything but letters,
// digits and ._:/+- is shown as inline code, so a label never pings,
// links or breaks the list.
func LabelChange(repo string, number int, added, removed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s#%d", repo, number)
	for _, l := range added {
		b.WriteString(" +" + labelToken(l))
	}
	for _, l := range removed {
		b.WriteString(" -" + labelToken(l))
	}
	return b.String()
}

func labelToken(name string) string {
	if plainLabelRE().MatchString(name) {
		return name
	}
	return "`" + inlineCode(name) + "`"
}

// Headings of the tracking lists, in order.
const (
	hComments = "Created Comments:"
	hIssues   = "Created Issues:"
	hPRs      = "Created PRs:"
	hRepos    = "Affected Repositories:"
	hPushed   = "Pushed Commits:"
	hLabels   = "Label Changes:"
	none      = "(none)"
)

// TrackingLists renders the lists exactly as SPEC §6 and §3a show them.
// Items are folded to one line; repositories are deduplicated
// (case-insensitively).
func TrackingLists(t Tracking) string {
	var b strings.Builder
	list := func(h string, items []string) {
		b.WriteString(h + "\n")
		n := 0
		for _, it := range items {
			if it = oneLine(redact.String(it)); it != "" {
				b.WriteString("- " + it + "\n")
				n++
			}
		}
		if n == 0 {
			b.WriteString("- " + none + "\n")
		}
	}
	list(hComments, t.Comments)
	b.WriteString("\n")
	list(hIssues, t.Issues)
	b.WriteString("\n")
	list(hPRs, t.PRs)
	b.WriteString("\n")
	b.WriteString(hRepos + "\n")
	var repos []string
	seen := map[string]bool{}
	for _, r := range t.Repos {
		r = oneLine(redact.String(r))
		if k := strings.ToLower(r); r != "" && !seen[k] {
			seen[k] = true
			repos = append(repos, r)
		}
	}
	if len(repos) == 0 {
		b.WriteString(none + "\n")
	} else {
		b.WriteString(strings.Join(repos, ", ") + "\n")
	}
	b.WriteString("\n")
	list(hPushed, t.Pushed)
	b.WriteString("\n")
	list(hLabels, t.Labels)
	return b.String()
}

// LogIssueTitle is the run-log issue's title.
func LogIssueTitle(target, author, jobID string) string {
	t := fmt.Sprintf("mention-runner: %s by %s (job %s)", oneLine(target), oneLine(author), oneLine(jobID))
	t, _ = cutRunes(redact.String(t), 256)
	return t
}

// LogIssueBody is the run-log issue body: run metadata, the tracking lists
// and, when publish refused writes, the list of them.
func LogIssueBody(r Report) string {
	var b strings.Builder
	b.WriteString("### mention-runner run\n\n")
	item := func(k, v string) { fmt.Fprintf(&b, "- **%s:** %s\n", k, v) }
	item("Target", link(r.Target, r.TargetURL))
	author := value(r.TriggerAuthor)
	if r.TriggerAuthor != "" {
		base := strings.TrimSuffix(cmp.Or(r.ServerURL, contract.DefaultServerURL), "/")
		author = link(r.TriggerAuthor, base+"/"+oneLine(r.TriggerAuthor))
	}
	if r.TriggerURL != "" {
		author += " (" + link("trigger comment", r.TriggerURL) + ")"
	}
	item("Triggered by", author)
	item("Workflow run", link(r.WorkflowRunURL, r.WorkflowRunURL))
	if r.RecordArtifact != "" {
		where := "the workflow run"
		if strings.HasPrefix(r.WorkflowRunURL, "https://") {
			where = link("the workflow run's artifacts", r.WorkflowRunURL+"#artifacts")
		}
		item("Run record", "artifact `"+inlineCode(r.RecordArtifact)+"` of "+where+" (events, transcript, session, logs)")
	}
	engine := value(r.Engine)
	if r.Model != "" && r.Model != r.Engine { // the replay engine names itself as its model
		engine += " (" + value(r.Model) + ")"
	}
	item("Engine", engine)
	item("Status", value(r.Status))
	if r.Reason != "" {
		item("Why it failed", value(r.Reason))
	}
	cost := "n/a"
	if r.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	item("Duration", fmt.Sprintf("%s · **Turns:** %d · **Cost:** %s", r.Duration.Round(time.Second), r.Turns, cost))
	policy := "(none)"
	if p := oneLine(r.PolicyWords); p != "" {
		policy = "`" + inlineCode(p) + "`"
	}
	item("Effective policy", policy)
	item("Writes denied by the gate", fmt.Sprint(r.Denied))
	b.WriteString("\n")
	b.WriteString(TrackingLists(r.Tracking()))
	if len(r.Refused) > 0 {
		b.WriteString("\nRefused Writes:\n")
		for _, f := range r.Refused {
			fmt.Fprintf(&b, "- output %d: %s on %s refused by `%s`: %s\n",
				f.Index, value(f.Kind), value(f.Repo), inlineCode(f.Rule), value(f.Reason))
		}
	}
	return redact.String(b.String())
}

func value(s string) string {
	if s = oneLine(s); s == "" {
		return "(unknown)"
	}
	return escapeHTML(s)
}

// link is a markdown link when url is an https URL, else the plain text.
func link(text, url string) string {
	text, url = oneLine(text), oneLine(url)
	if text == "" {
		text = url
	}
	if text == "" {
		return "(unknown)"
	}
	text = strings.NewReplacer("[", "\\[", "]", "\\]").Replace(escapeHTML(text))
	if !strings.HasPrefix(url, "https://") || strings.ContainsAny(url, " ()<>") {
		return text
	}
	return "[" + text + "](" + url + ")"
}

// ErrNoTrackingLists means the body has no "Created Comments:" line.
var ErrNoTrackingLists = errors.New("no tracking lists in the log issue body")

// TrackingFormatError says which line of the lists is wrong.
type TrackingFormatError struct {
	Line   int // 1-based line of the body
	Reason string
}

func (e *TrackingFormatError) Error() string {
	return fmt.Sprintf("log issue tracking lists, line %d: %s", e.Line, e.Reason)
}

// The patterns are compiled on first use, not at start-up: their counted
// repeats ({0,252}, {1,100}) expand to thousands of allocations, which every
// runner process paid whether or not it reads a log issue.
var (
	// commentURLRE is an issue or PR comment link on any GitHub host. http
	// is accepted because GitHub Enterprise and the test simulator may serve
	// it; the path must still be exactly owner/name/(issues|pull)/n#anchor
	// (a review: owner/name/pull/n#pullrequestreview-id).
	commentURLRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})(?::[0-9]{1,5})?/` +
			`[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}/` +
			`(?:(?:issues|pull)/[1-9][0-9]{0,9}#(?:issuecomment-|discussion_r)|pull/[1-9][0-9]{0,9}#pullrequestreview-)[1-9][0-9]{0,18}$`)
	})
	threadRefRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}#[1-9][0-9]{0,9}$`)
	})
	pushedRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100})@[0-9a-f]{7,12} \(([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100})#[1-9][0-9]{0,9}\)$`)
	})
	labelChangeRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}#[1-9][0-9]{0,9}(?: [+-](?:[A-Za-z0-9._:/+-]+|`[^`]+`))+$")
	})
	plainLabelRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9._:/+-]{1,50}$`)
	})
	repoRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	})
)

// ParseTrackingLists reads the lists back from a log issue body. It is the
// oracle the tests hold the log issue to (publish finds what it already
// wrote by its markers, not by this): strict, so anything but the exact
// layout TrackingLists writes is an error, never a guess.
func ParseTrackingLists(body string) (Tracking, error) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if l == hComments {
			start = i
			break
		}
	}
	if start < 0 {
		return Tracking{}, ErrNoTrackingLists
	}
	var t Tracking
	i := start
	bad := func(reason string, a ...any) error {
		return &TrackingFormatError{Line: i + 1, Reason: fmt.Sprintf(reason, a...)}
	}
	section := func(h string, re *regexp.Regexp, what string) ([]string, error) {
		if i >= len(lines) || lines[i] != h {
			return nil, bad("want %q", h)
		}
		i++
		var items []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			it, ok := strings.CutPrefix(lines[i], "- ")
			if !ok {
				return nil, bad("want a list item \"- …\", got %q", lines[i])
			}
			if it == none {
				if len(items) > 0 || (i+1 < len(lines) && lines[i+1] != "") {
					return nil, bad("%q must be the only item", none)
				}
				continue
			}
			if !re.MatchString(it) {
				return nil, bad("%q is not %s", it, what)
			}
			items = append(items, it)
		}
		if len(items) == 0 && lines[i-1] != "- "+none {
			return nil, bad("empty list must read \"- %s\"", none)
		}
		i++ // the blank line
		return items, nil
	}
	var err error
	if t.Comments, err = section(hComments, commentURLRE(), "a comment URL"); err != nil {
		return Tracking{}, err
	}
	if t.Issues, err = section(hIssues, threadRefRE(), "owner/name#n"); err != nil {
		return Tracking{}, err
	}
	if t.PRs, err = section(hPRs, threadRefRE(), "owner/name#n"); err != nil {
		return Tracking{}, err
	}
	if i >= len(lines) || lines[i] != hRepos {
		return Tracking{}, bad("want %q", hRepos)
	}
	i++
	if i >= len(lines) {
		return Tracking{}, bad("missing the repository line")
	}
	if lines[i] != none {
		for _, r := range strings.Split(lines[i], ", ") {
			if !repoRE().MatchString(r) {
				return Tracking{}, bad("%q is not owner/name", r)
			}
			t.Repos = append(t.Repos, r)
		}
	}
	i++
	if i >= len(lines) || lines[i] != "" {
		return Tracking{}, bad("want a blank line before %q", hPushed)
	}
	i++
	if t.Pushed, err = section(hPushed, pushedRE(), "owner/name@sha (owner/name#n)"); err != nil {
		return Tracking{}, err
	}
	if t.Labels, err = section(hLabels, labelChangeRE(), "owner/name#n +label -label"); err != nil {
		return Tracking{}, err
	}
	return t, nil
}
