package publish

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// Marker job ids of the writes publish makes on its own behalf.
func logKey(jobID string) key            { return key{jobID + ".log", 0} }
func errorKey(jobID string, i int) key   { return key{jobID + ".error", i} }
func noticeKey(jobID string) key         { return key{jobID + ".notice", 0} }
func sessionKey(jobID string, i int) key { return key{jobID + ".session", i} }

// report writes everything people read: the session and error comments,
// the log issue body (ending with the job's final marker: its done state),
// its state and label, the reaction, the step summary; then it deletes the
// job's refs.
func (p *publisher) report(ctx context.Context, run AgentRun) error {
	r := buildReport(threadOf(p.job), p.pol, p.polErr, run, p.res, p.o)
	parts := render.SessionMarkdown(sessionOf(run), p.o.Session)
	p.res.Report, p.res.SessionParts = r, parts
	p.res.StepSummary = render.StepSummary(r, parts)

	for i, part := range parts {
		k := sessionKey(p.job.JobID, i)
		if err := p.upsertLogComment(ctx, k, withMarker(part, k)); err != nil {
			return err
		}
	}
	ecs := errorComments(run, p.res, p.o)
	for _, ec := range ecs {
		k := errorKey(p.job.JobID, ec.index)
		if err := p.upsertLogComment(ctx, k, withMarker(ec.body, k)); err != nil {
			return err
		}
	}
	if err := p.finishLogIssue(ctx, r); err != nil {
		return err
	}
	if err := p.finishRecord(r, len(parts), len(ecs)); err != nil {
		p.logf("the run record could not be finished: %v", err)
	}
	p.react(ctx)
	p.deleteJobRefs(ctx)
	return nil
}

// thread is what the report says about the trigger, from the trusted context.
type thread struct {
	Repo       string
	Number     int
	IsPR       bool
	Author     string
	TriggerURL string
}

func threadOf(j *job.Job) thread {
	return thread{Repo: j.Repo, Number: j.Number, IsPR: j.IsPR, Author: j.Author, TriggerURL: j.TriggerURL}
}

// buildReport gathers what the log issue and step summary show. Facts
// about the thread come from the trusted context; engine, turns and cost
// from the agent's record (they only inform).
func buildReport(t thread, pol policy.Policy, polErr error, run AgentRun, res *Result, o Options) render.Report {
	repo, number, isPR, author, trigger := t.Repo, t.Number, t.IsPR, t.Author, t.TriggerURL
	kind := "issues"
	if isPR {
		kind = "pull"
	}
	r := render.Report{
		Target:         fmt.Sprintf("%s#%d", repo, number),
		TargetURL:      fmt.Sprintf("%s/%s/%s/%d", strings.TrimSuffix(o.ServerURL, "/"), repo, kind, number),
		TriggerAuthor:  author,
		TriggerURL:     trigger,
		ServerURL:      o.ServerURL,
		WorkflowRunURL: o.WorkflowRunURL,
		Engine:         cmp.Or(run.Engine, o.Engine),
		Model:          run.Model,
		Duration:       run.Duration,
		Turns:          run.Turns,
		CostUSD:        run.CostUSD,
		Status:         statusText(res.Status, res.Cause),
		Reason:         res.Reason,
		PolicyWords:    policyFlags(pol, polErr),
		Refused:        res.Refused,
		Denied:         run.Denied,
	}
	if res.JobID != "" {
		r.RecordArtifact = contract.RecordArtifactPrefix + res.JobID
	}
	for _, w := range res.Written {
		switch w.Kind {
		case policy.KindComment, policy.KindReview:
			r.Comments = append(r.Comments, w.URL)
		case policy.KindLabels:
			r.Labels = append(r.Labels, render.LabelChange(w.Repo, w.Number, w.Added, w.Removed))
		case policy.KindPush:
			r.Pushed = append(r.Pushed, render.PushedCommit(w.Repo, w.SHA, w.Number))
		case policy.KindIssue:
			r.Issues = append(r.Issues, fmt.Sprintf("%s#%d", w.Repo, w.Number))
		case policy.KindPullRequest:
			r.PRs = append(r.PRs, fmt.Sprintf("%s#%d", w.Repo, w.Number))
		}
		r.Repos = append(r.Repos, w.Repo)
		if w.HeadRepo != "" {
			r.Repos = append(r.Repos, w.HeadRepo)
		}
	}
	return r
}

// withMarker ends a log-issue comment with its hidden marker. The text is
// made inert first: agent text on the control repo must not ping anyone or
// load images, whatever the run's policy.
func withMarker(body string, k key) string {
	return strings.TrimRight(render.Inert(body), "\n") + "\n\n" + k.marker()
}

// upsertLogComment posts body (ending with k's marker) on the log issue
// once; a re-run that finds it with other text edits it instead.
func (p *publisher) upsertLogComment(ctx context.Context, k key, body string) error {
	owner, name := splitRepo(p.o.ControlRepo)
	n := p.res.LogIssue
	what := fmt.Sprintf("log issue %s#%d: comment %s/%d", p.o.ControlRepo, n, k.job, k.index)
	f, existed, err := p.writeOnce(ctx, what,
		func(fresh bool) (found, bool, error) {
			return p.control.comment(ctx, p.o.Control, p.o.ControlRepo, n, p.o.ControlLogin, k, fresh)
		},
		func() (found, error) {
			c, _, err := p.o.Control.Issues.CreateComment(ctx, owner, name, n, &github.IssueComment{Body: github.String(body)})
			if err != nil {
				return found{}, err
			}
			return found{number: n, id: c.GetID(), url: c.GetHTMLURL(), body: body}, nil
		})
	if err != nil {
		return err
	}
	if existed && f.body != body && f.id != 0 {
		if err := p.repeatIdempotent(ctx, what+": update", func() error {
			_, _, err := p.o.Control.Issues.EditComment(ctx, owner, name, f.id, &github.IssueComment{Body: github.String(body)})
			return err
		}); err != nil {
			return fmt.Errorf("%s: update: %w", what, err)
		}
		f.body = body
	}
	p.control.addComment(p.o.ControlRepo, n, k, f)
	return nil
}

// ensureLogIssue is assemble's log issue, or this job's own (found by its
// marker, else created) when assemble did not pass one.
func (p *publisher) ensureLogIssue(ctx context.Context) (int, error) {
	if p.o.LogIssue > 0 {
		return p.o.LogIssue, nil
	}
	k := logKey(p.job.JobID)
	owner, name := splitRepo(p.o.ControlRepo)
	title := render.LogIssueTitle(fmt.Sprintf("%s#%d", p.job.Repo, p.job.Number), p.job.Author, p.job.JobID)
	f, _, err := p.writeOnce(ctx, "create the run-log issue",
		func(fresh bool) (found, bool, error) {
			return p.control.issue(ctx, p.o.Control, p.o.ControlRepo, p.o.ControlLogin, k, fresh)
		},
		func() (found, error) {
			is, _, err := p.o.Control.Issues.Create(ctx, owner, name, &github.IssueRequest{
				Title: github.String(title), Body: github.String("Publishing…\n\n" + k.marker()), Labels: &[]string{contract.LogLabel}})
			if err != nil {
				return found{}, err
			}
			return found{number: is.GetNumber(), url: is.GetHTMLURL()}, nil
		})
	if err != nil {
		return 0, err
	}
	return f.number, nil
}

// finishLogIssue writes the body, closes the issue as completed on success
// or keeps it open with the cause's label on failure.
func (p *publisher) finishLogIssue(ctx context.Context, r render.Report) error {
	owner, name := splitRepo(p.o.ControlRepo)
	n := p.res.LogIssue
	// The final marker goes last: it is the job's done state (assemble
	// reads it on a re-run or a later delivery), so setting it costs no
	// write of its own.
	body := capLogBody(render.Inert(render.LogIssueBody(r))) + "\n" + logKey(p.job.JobID).marker() + "\n" +
		contract.LogIssueFinalMarker(p.job.JobID) + "\n"
	req := &github.IssueRequest{Body: github.String(body), State: github.String("open")}
	if p.res.Status == "completed" {
		req.State, req.StateReason = github.String("closed"), github.String("completed")
	}
	// The cause label goes in the same update (a re-run that now succeeds,
	// or fails otherwise, drops stale causes): the labels are read first,
	// as the update replaces them all. A success on a log issue this run
	// opened has no cause to add or drop: its labels are left alone.
	if p.res.Cause != "" || !p.firstOnNewLogIssue() {
		labels, err := p.logIssueLabels(ctx, n)
		if err != nil {
			return err
		}
		req.Labels = labels
	}
	err := p.repeatIdempotent(ctx, "update the log issue", func() (err error) {
		_, _, err = p.o.Control.Issues.Edit(ctx, owner, name, n, req)
		return err
	})
	if err != nil {
		return fmt.Errorf("update log issue %s#%d: %w", p.o.ControlRepo, n, err)
	}
	return nil
}

// logIssueLabels reads the log issue's labels and returns the ones the
// update sets: the run's cause instead of any other cause; nil when they
// stay as they are.
func (p *publisher) logIssueLabels(ctx context.Context, n int) (*[]string, error) {
	owner, name := splitRepo(p.o.ControlRepo)
	var cur *github.Issue
	err := p.repeatIdempotent(ctx, "read the log issue", func() (err error) {
		cur, _, err = p.o.Control.Issues.Get(ctx, owner, name, n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read log issue %s#%d: %w", p.o.ControlRepo, n, err)
	}
	var have []string
	want := []string{} // not nil: an update to no labels sends []
	for _, l := range cur.Labels {
		have = append(have, l.GetName())
		if l.GetName() == p.res.Cause || !slices.Contains(contract.CauseLabels, l.GetName()) {
			want = append(want, l.GetName())
		}
	}
	if p.res.Cause != "" && !slices.Contains(want, p.res.Cause) {
		want = append(want, p.res.Cause)
	}
	if slices.Equal(have, want) {
		return nil, nil
	}
	return &want, nil
}

const logCutNote = "\n… the rest is cut (GitHub's 65,536-character limit); the step summary and the run artifact have it all\n"

// capLogBody keeps the log issue body under GitHub's limit, cutting at a
// line boundary so the tracking lists above the cut still parse.
func capLogBody(s string) string {
	limit := contract.GitHubBodyChars - 200
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	kept := string([]rune(s)[:limit-len(logCutNote)])
	if i := strings.LastIndexByte(kept, '\n'); i > 0 {
		kept = kept[:i+1]
	}
	return kept + logCutNote
}

// policyFlags is the effective policy as !cfg flags, or why there is none.
func policyFlags(p policy.Policy, polErr error) string {
	if polErr != nil {
		return "unavailable: every write refused"
	}
	return p.Flags()
}
