package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Scenario is one story the demo tells: the comments alice writes, what
// the (scripted) agent does, and what a person should then see.
type Scenario struct {
	Name  string
	About string
	// Comments are posted one after another; each goes through the
	// dispatcher (and, when it dispatches, the three jobs).
	Comments []string
	// Script is the replay engine's session (JSONL); "" = the default
	// script file (demo/replay.jsonl).
	Script   string
	Settings []string // extra runner settings (MR_*=…)
	// PR makes the thread a pull request (SeedOptions.PR); Labels and
	// ThreadLabels seed the repository's labels and the thread's.
	PR                   bool
	Labels, ThreadLabels []string
	BotPermission        string // the bot's role on the target (SeedOptions.BotPermission)
	// MoveBranchBefore is the comment (1-based; 0 = none) whose run sees
	// the pull request's branch move between its agent job and publish:
	// bob pushes a commit to PRBranch then.
	MoveBranchBefore int
	Want             Want
}

// Want is what the scenario must show to have behaved as intended.
type Want struct {
	Run      bool   // the comments start a run (assemble, agent, publish)
	Status   string // the run's final status: completed | failed
	Cause    string // the log issue's label when it failed
	Comments int    // written comments, issues and PRs (tracking lists)
	Issues   int
	PRs      int
	// ErrorHeading starts the one error comment on the log issue ("" = none).
	ErrorHeading string
	Denied       bool     // the gate denied a write (shown in the session, not an error)
	Replies      []string // the bot's replies on the thread contain these, in order
	// Reviews are the inline comment counts of the bot's reviews on the
	// thread, in order (nil = not checked).
	Reviews []int
	// LabelChanges is the Label Changes list's length; ThreadLabels the
	// thread's labels at the end (nil = not checked).
	LabelChanges int
	ThreadLabels []string
	// Pushed is the Pushed Commits list's length (of the last run);
	// BotCommits the bot's commits on PRBranch at the end.
	Pushed, BotCommits int
	// Notice is in the last run's notice on the thread ("" = not checked).
	Notice string
}

// Scenarios are the stories `make demo SCENARIO=…` tells.
var Scenarios = []Scenario{
	{
		Name:     "default",
		About:    "a task with an allowed comment and a denied issue (here-only)",
		Comments: []string{DefaultComment},
		Want:     Want{Run: true, Status: "completed", Comments: 1, Denied: true},
	},
	{
		Name:  "pr",
		About: "the agent commits a fix and asks for a pull request; publish pushes it to the bot's fork",
		Comments: []string{"@" + BotLogin + " !cfg repo=" + TargetRepo + " no-issue\n" +
			"Please fix the line endings for good and open a pull request."},
		Script: lines(
			`{"text": "The lint step fails on CRLF line endings; a .gitattributes fixes that for every checkout."}`,
			`{"bash": "printf '* text=auto eol=lf\\n' > .gitattributes"}`,
			`{"tool": "create_pull_request", "args": {"repo": "`+TargetRepo+`", "title": "Normalize line endings with .gitattributes", "body": "Windows checkouts get LF endings, so the lint step passes.", "base": "main"}}`,
			`{"text": "I opened a pull request with the .gitattributes fix."}`,
		),
		Settings: []string{"MR_ALLOWED_TOOLS=Bash"},
		Want:     Want{Run: true, Status: "completed", PRs: 1},
	},
	{
		Name:  "review",
		About: "a review of the pull request with inline comments on its diff; a comment on a line outside the diff is denied",
		PR:    true,
		Comments: []string{"@" + BotLogin + " !cfg here-only\n" +
			"Please review this pull request."},
		Script: lines(
			`{"text": "The pull request adds `+PROnlyFile+`; I will comment on it."}`,
			`{"tool": "create_review", "args": {"repo": "`+TargetRepo+`", "number": 1, "body": "One note on the new file.", "comments": [{"path": "`+PROnlyFile+`", "line": 7, "body": "Line 7?"}]}}`,
			`{"text": "Line 7 is not in the diff; the file has one line."}`,
			`{"tool": "create_review", "args": {"repo": "`+TargetRepo+`", "number": 1, "body": "One note on the new file.", "comments": [{"path": "`+PROnlyFile+`", "line": 1, "body": "Say why this file exists only on the branch."}]}}`,
			`{"text": "I reviewed the pull request."}`,
		),
		Want: Want{Run: true, Status: "completed", Comments: 1, Denied: true, Reviews: []int{1}},
	},
	{
		Name:         "triage",
		About:        "triage: labels the repository has are added and needs-triage removed; a label it does not have is denied",
		Labels:       []string{"bug", "windows", "needs-triage"},
		ThreadLabels: []string{"needs-triage"},
		// labelling needs the triage role on GitHub
		BotPermission: "triage",
		Comments: []string{"@" + BotLogin + " !cfg no-pr no-issue\n" +
			"Please triage this issue."},
		Script: lines(
			`{"text": "A Windows build bug."}`,
			`{"tool": "add_labels", "args": {"repo": "`+TargetRepo+`", "number": 1, "labels": ["bug", "windows", "crlf"]}}`,
			`{"text": "There is no crlf label; bug and windows then."}`,
			`{"tool": "add_labels", "args": {"repo": "`+TargetRepo+`", "number": 1, "labels": ["bug", "windows"]}}`,
			`{"tool": "remove_labels", "args": {"repo": "`+TargetRepo+`", "number": 1, "labels": ["needs-triage"]}}`,
			`{"text": "Triaged."}`,
		),
		Want: Want{Run: true, Status: "completed", Denied: true, LabelChanges: 2, ThreadLabels: []string{"bug", "windows"}},
	},
	{
		Name:  "fix-in-place",
		About: "a fix committed onto the pull request's own branch; a second run, whose branch moves before publish, is refused and asks to mention the bot again",
		PR:    true,
		Comments: []string{"@" + BotLogin + " !cfg no-issue\nPlease fix it in this PR.",
			"@" + BotLogin + " !cfg no-issue\nOne more fix, please."},
		Script: lines(
			`{"text": "The lint step fails on CRLF line endings; a .gitattributes on this branch fixes that."}`,
			`{"bash": "printf '* text=auto eol=lf\\n' >> .gitattributes"}`,
			`{"tool": "push_to_pull_request", "args": {"repo": "`+TargetRepo+`", "number": 1, "message": "Normalize line endings with .gitattributes"}}`,
			`{"text": "I pushed the fix onto this pull request's branch."}`,
		),
		Settings:         []string{"MR_ALLOWED_TOOLS=Bash", "MR_ALLOW_PUSH=true"},
		MoveBranchBefore: 2,
		BotPermission:    "write", // GitHub lets only writers push to a branch
		// the second run wrote nothing but its notice on the thread
		Want: Want{Run: true, Status: "failed", Comments: 1, BotCommits: 1, Notice: "mention the bot again"},
	},
	{
		Name:     "bad-cfg",
		About:    "a typo in !cfg: the bot answers once with the valid flags and nothing runs",
		Comments: []string{"@" + BotLogin + " !cfg here-onyl\nexplain the failure"},
		Want:     Want{Replies: []string{"here-onyl"}},
	},
	{
		Name:     "go-away",
		About:    "alice opts out, then undoes it",
		Comments: []string{"@" + BotLogin + " go away", "@" + BotLogin + " come back"},
		Want:     Want{Replies: []string{"I will no longer act here", "welcome back"}},
	},
	{
		Name:     "loop",
		About:    "the agent repeats a denied call; the runner stops it as a loop",
		Comments: []string{DefaultComment},
		Script: lines(append([]string{`{"text": "I will open the tracking issue."}`},
			slices.Repeat([]string{`{"tool": "create_issue", "args": {"repo": "` + TargetRepo + `", "title": "CRLF", "body": "track it"}}`}, 8)...)...),
		// Comments: 1 is the notice on the thread that nothing was written
		Want: Want{Run: true, Status: "failed", Cause: "loop-detected", Comments: 1, ErrorHeading: "## Error: Loop Detected", Denied: true},
	},
	{
		Name:     "crash",
		About:    "the engine dies mid-run; its own error text reaches the log issue",
		Comments: []string{DefaultComment},
		Script: lines(`{"text": "Reading the build log."}`,
			`{"crash": "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"}`),
		Want: Want{Run: true, Status: "failed", Cause: "crash", Comments: 1, ErrorHeading: "## Error: Replay Runtime Error"},
	},
	{
		Name:     "max-turns",
		About:    "the engine reaches the turn limit (MR_MAX_TURNS=2) after posting its comment",
		Comments: []string{DefaultComment},
		Script: lines(`{"text": "Looking at the build log."}`,
			`{"tool": "add_comment", "args": {"repo": "`+TargetRepo+`", "number": 1, "body": "The lint step rejects CRLF line endings; details follow."}}`,
			`{"text": "Now the CI configuration."}`,
			`{"tool": "noop", "args": {"reason": "still reading"}}`,
			`{"text": "Done."}`),
		Settings: []string{"MR_MAX_TURNS=2"},
		Want:     Want{Run: true, Status: "failed", Cause: "max-turns", Comments: 1, ErrorHeading: "## Error: Max Turns Reached"},
	},
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// ScenarioNames lists the scenarios' names, in order.
func ScenarioNames() []string {
	out := make([]string, len(Scenarios))
	for i, s := range Scenarios {
		out[i] = s.Name
	}
	return out
}

// FindScenario returns the named scenario.
func FindScenario(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Outcome is what one scenario did.
type Outcome struct {
	Scenario Scenario
	World    *World
	Flow     *Flow // the last flow (nil when no comment dispatched)
	Problems []string
}

// OK reports whether the scenario behaved as intended.
func (o *Outcome) OK() bool { return len(o.Problems) == 0 }

// RunScenario seeds a fresh simulator and tells the story. base gives the
// binaries, the default script, settings and the output directory (a
// fresh one per scenario). The caller closes o.World.Sim.
func RunScenario(ctx context.Context, sc Scenario, base Options) (*Outcome, error) {
	if len(sc.Comments) == 0 {
		return nil, fmt.Errorf("scenario %s: no comments", sc.Name)
	}
	w, err := Seed(SeedOptions{Comment: sc.Comments[0], PR: sc.PR, Labels: sc.Labels, ThreadLabels: sc.ThreadLabels, BotPermission: sc.BotPermission})
	if err != nil {
		return nil, err
	}
	out := &Outcome{Scenario: sc, World: w}
	o := base
	o.World = w
	o.Settings = append(append([]string{}, base.Settings...), sc.Settings...)
	if sc.Script != "" {
		if err := os.MkdirAll(base.OutDir, 0o755); err != nil {
			return out, err
		}
		o.ReplayScript = filepath.Join(base.OutDir, "replay.jsonl")
		if err := os.WriteFile(o.ReplayScript, []byte(sc.Script), 0o644); err != nil {
			return out, err
		}
	}
	for i, text := range sc.Comments {
		if i > 0 {
			if _, err := w.Sim.Comment(TargetRepo, w.Issue, Author, text); err != nil {
				return out, err
			}
		}
		o.OutDir = filepath.Join(base.OutDir, fmt.Sprintf("comment-%d", i+1))
		f, err := New(o)
		if err != nil {
			return out, err
		}
		if i+1 == sc.MoveBranchBefore {
			err = f.runMovingBranch(ctx)
		} else {
			err = f.Run(ctx)
		}
		var se *StageError
		switch {
		case errors.Is(err, ErrNoDispatch):
			// answered on the thread or ignored: Verify says whether that was meant
		case errors.As(err, &se) && (se.Stage == f.Agent || slices.Contains(f.Publishes, se.Stage)):
			// a failed run exits non-zero; what it reported is what counts
			out.Flow = f
		case err != nil:
			return out, fmt.Errorf("scenario %s, comment %d: %w", sc.Name, i+1, err)
		default:
			out.Flow = f
		}
	}
	out.Problems = out.verify()
	return out, nil
}

// Verify returns the outcome of sc's story told on w by flow f (nil when
// no comment dispatched) for a caller that ran the flow itself, job by
// job, as RunScenario would have: the same checks against sc.Want.
func Verify(sc Scenario, w *World, f *Flow) *Outcome {
	o := &Outcome{Scenario: sc, World: w, Flow: f}
	o.Problems = o.verify()
	return o
}

// verify compares what happened with sc.Want.
func (o *Outcome) verify() []string {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	want, w := o.Scenario.Want, o.World
	replies := o.botReplies()
	if len(replies) < len(want.Replies) {
		bad("the bot replied %d times on the thread, want at least %d", len(replies), len(want.Replies))
	}
	for i, r := range want.Replies {
		if i < len(replies) && !strings.Contains(replies[i].GetBody(), r) {
			bad("reply %d does not say %q: %q", i+1, r, replies[i].GetBody())
		}
	}
	if !want.Run {
		if o.Flow != nil {
			bad("a run started (job %s), want none", o.Flow.JobID)
		}
		return p
	}
	if o.Flow == nil || o.Flow.LogIssue == 0 {
		return append(p, "no run reached a log issue")
	}
	is, _ := w.Sim.Issue(ControlRepo, o.Flow.LogIssue)
	if is == nil {
		return append(p, "the log issue is missing")
	}
	if err := CheckAgreement(o.Flow, is); err != nil {
		bad("%v", err)
	}
	wantState := "open"
	if want.Status == "completed" {
		wantState = "closed"
	}
	if is.GetState() != wantState {
		bad("log issue is %s, want %s", is.GetState(), wantState)
	}
	if want.Cause != "" && !hasLabel(is, want.Cause) {
		bad("log issue lacks the label %q", want.Cause)
	}
	body := is.GetBody()
	if want.Status == "failed" && !strings.Contains(body, "**Why it failed:**") {
		bad("the log issue body does not say why the run failed")
	}
	for _, c := range []struct {
		head string
		n    int
	}{{"Created Comments:", want.Comments}, {"Created Issues:", want.Issues}, {"Created PRs:", want.PRs}} {
		if got := listCount(body, c.head); got != c.n {
			bad("%s lists %d, want %d", c.head, got, c.n)
		}
	}
	if got := listCount(body, "Pushed Commits:"); got != want.Pushed {
		bad("Pushed Commits: lists %d, want %d", got, want.Pushed)
	}
	if want.Notice != "" {
		cs := w.Sim.Comments(TargetRepo, w.Issue)
		if len(cs) == 0 || !strings.Contains(cs[len(cs)-1].GetBody(), want.Notice) {
			bad("the thread's last comment does not say %q", want.Notice)
		}
	}
	if want.BotCommits > 0 {
		if got, err := w.botCommits(); err != nil || got != want.BotCommits {
			bad("the bot has %d commit(s) on %s (%v), want %d", got, PRBranch, err, want.BotCommits)
		}
	}
	if got := listCount(body, "Label Changes:"); got != want.LabelChanges {
		bad("Label Changes: lists %d, want %d", got, want.LabelChanges)
	}
	if want.ThreadLabels != nil && !slices.Equal(w.Sim.IssueLabels(TargetRepo, w.Issue), want.ThreadLabels) {
		bad("the thread's labels are %q, want %q", w.Sim.IssueLabels(TargetRepo, w.Issue), want.ThreadLabels)
	}
	if want.Reviews != nil {
		var got []int
		for _, r := range w.Sim.Reviews(TargetRepo, w.Issue) {
			if strings.EqualFold(r.Author, BotLogin) {
				got = append(got, len(r.Comments))
			}
		}
		if !slices.Equal(got, want.Reviews) {
			bad("the bot's reviews have %v inline comments, want %v", got, want.Reviews)
		}
	}
	var errs []string
	failed, firstFailed := 0, ""
	for _, c := range w.Sim.Comments(ControlRepo, o.Flow.LogIssue) {
		if strings.HasPrefix(c.GetBody(), "## Error:") {
			errs = append(errs, c.GetBody())
		}
		failed += strings.Count(c.GetBody(), failedCall)
		if firstFailed == "" {
			firstFailed = failedLine(c.GetBody())
		}
	}
	// a happy path shows the reader no failed tool call but the gate's
	// denials it sets out to show
	if want.Status == "completed" {
		denied := 0
		if sum, err := o.Flow.Summarize(); err == nil {
			denied = len(sum.Denials)
		}
		if failed > denied {
			bad("the session shows %d failed tool call(s) on a happy path, %d of them gate denials: %q", failed, denied, firstFailed)
		}
	}
	switch {
	case want.ErrorHeading == "" && len(errs) > 0:
		bad("error comments on the log issue, want none: %q", firstLines(errs))
	case want.ErrorHeading != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0], want.ErrorHeading)):
		bad("error comments %q, want exactly one starting %q", firstLines(errs), want.ErrorHeading)
	}
	sess := o.sessionComments()
	if len(sess) == 0 || !strings.Contains(sess[0], "[User]\n") {
		bad("the session comment has no [User] block")
	}
	if want.Denied != strings.Contains(strings.Join(sess, "\n"), "denied") {
		bad("a gate denial in the session: %v, want %v", !want.Denied, want.Denied)
	}
	return p
}

func hasLabel(is *github.Issue, name string) bool {
	for _, l := range is.Labels {
		if l.GetName() == name {
			return true
		}
	}
	return false
}

// listCount counts the items of one tracking list in a log issue body.
func listCount(body, head string) int {
	i := strings.Index(body, head+"\n")
	if i < 0 {
		return -1
	}
	n := 0
	for _, l := range strings.Split(body[i+len(head)+1:], "\n") {
		if !strings.HasPrefix(l, "- ") {
			break
		}
		if l != "- (none)" {
			n++
		}
	}
	return n
}

func firstLines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i], _, _ = strings.Cut(s, "\n")
	}
	return out
}

func (o *Outcome) botReplies() []*github.IssueComment {
	var out []*github.IssueComment
	for _, c := range o.World.Sim.Comments(TargetRepo, o.World.Issue) {
		if strings.EqualFold(c.GetUser().GetLogin(), BotLogin) && !strings.Contains(c.GetBody(), "[!NOTE]") {
			out = append(out, c)
		}
	}
	return out
}

func (o *Outcome) sessionComments() []string {
	var out []string
	if o.Flow == nil {
		return nil
	}
	for _, c := range o.World.Sim.Comments(ControlRepo, o.Flow.LogIssue) {
		if strings.HasPrefix(c.GetBody(), "## Session") {
			out = append(out, c.GetBody())
		}
	}
	return out
}

// Show prints the scenario as a person sees it: the thread, the log
// issue, the session comment(s) and the error comment(s).
func (o *Outcome) Show(w io.Writer) {
	sc := o.Scenario
	fmt.Fprintf(w, "\n######## scenario %s: %s\n", sc.Name, sc.About)
	section := func(title string) { fmt.Fprintf(w, "\n== %s ==\n", title) }
	section(fmt.Sprintf("Thread %s#%d", TargetRepo, o.World.Issue))
	for _, c := range o.World.Sim.Comments(TargetRepo, o.World.Issue) {
		fmt.Fprintf(w, "--- @%s:\n%s\n", c.GetUser().GetLogin(), strings.TrimSpace(c.GetBody()))
	}
	for _, r := range o.World.Sim.Reviews(TargetRepo, o.World.Issue) {
		fmt.Fprintf(w, "--- review by @%s (%s):\n%s\n", r.Author, r.State, strings.TrimSpace(r.Body))
		for _, c := range r.Comments {
			fmt.Fprintf(w, "    inline on %s line %d: %s\n", c.Path, c.Line, c.Body)
		}
	}
	if ls := o.World.Sim.IssueLabels(TargetRepo, o.World.Issue); len(ls) > 0 {
		fmt.Fprintf(w, "--- labels: %s\n", strings.Join(ls, ", "))
	}
	if o.Flow != nil && o.Flow.LogIssue > 0 {
		if is, _ := o.World.Sim.Issue(ControlRepo, o.Flow.LogIssue); is != nil {
			var labels []string
			for _, l := range is.Labels {
				labels = append(labels, l.GetName())
			}
			section(fmt.Sprintf("Log issue %s#%d (%s; labels: %s): %s", ControlRepo, is.GetNumber(), is.GetState(), strings.Join(labels, ", "), is.GetTitle()))
			fmt.Fprintln(w, strings.TrimSpace(is.GetBody()))
		}
		for _, c := range o.World.Sim.Comments(ControlRepo, o.Flow.LogIssue) {
			kind := "comment"
			switch {
			case strings.HasPrefix(c.GetBody(), "## Session"):
				kind = "session comment"
			case strings.HasPrefix(c.GetBody(), "## Error:"):
				kind = "error comment"
			}
			section(fmt.Sprintf("Log issue %s (by @%s)", kind, c.GetUser().GetLogin()))
			fmt.Fprintln(w, strings.TrimSpace(c.GetBody()))
		}
		if o.Flow.FinalRecordDir != "" {
			section("Run record")
			fmt.Fprintf(w, "complete record: %s\n", o.Flow.FinalRecordDir)
		}
	}
	section("Verdict")
	if o.OK() {
		fmt.Fprintf(w, "scenario %s behaved as intended\n", sc.Name)
		return
	}
	for _, p := range o.Problems {
		fmt.Fprintf(w, "NOT AS INTENDED: %s\n", p)
	}
}

// failedCall ends the summary line of a failed tool call in the session.
const failedCall = " — failed</summary>"

// failedLine is the summary line of the first failed tool call in body.
func failedLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, failedCall) {
			return l
		}
	}
	return ""
}
