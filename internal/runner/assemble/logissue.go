package assemble

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// maxIssuePages bounds the search for an existing log issue (100 a page).
const maxIssuePages = 10

// logIssues finds and creates run-log issues in the control repo. The
// listing is filtered by the log label and the job's marker, not by
// creator: a workflow token (GITHUB_TOKEN) cannot read /user to learn its
// login, and GitHub drops labels set by callers without push access.
type logIssues struct {
	gh          *github.Client
	owner, name string
}

// find returns the job's log issue, or nil. since bounds the listing: the
// issue was created after the job was dispatched. The newest come first.
func (l *logIssues) find(ctx context.Context, jobID string, since time.Time) (*github.Issue, error) {
	return l.list(ctx, jobID, since, "desc")
}

// findFrom is find for a job that began at about began (less the clock
// skew allowed): the oldest come first, so the job's issue is on the first
// pages however many newer issues the control repo has.
func (l *logIssues) findFrom(ctx context.Context, jobID string, began time.Time) (*github.Issue, error) {
	return l.list(ctx, jobID, began.Add(-sinceSlack), "asc")
}

func (l *logIssues) list(ctx context.Context, jobID string, since time.Time, direction string) (*github.Issue, error) {
	marker := contract.LogIssueMarker(jobID)
	opt := &github.IssueListByRepoOptions{
		State: "all", Labels: []string{contract.LogLabel}, Sort: "created", Direction: direction,
		Since: since, ListOptions: github.ListOptions{PerPage: 100},
	}
	for page := 0; page < maxIssuePages; page++ {
		list, resp, err := l.gh.Issues.ListByRepo(ctx, l.owner, l.name, opt)
		if err != nil {
			return nil, fmt.Errorf("list log issues in %s/%s: %w", l.owner, l.name, err)
		}
		for _, is := range list {
			if !is.IsPullRequest() && strings.Contains(is.GetBody(), marker) {
				return is, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opt.Page = resp.NextPage
	}
	return nil, nil
}

// createAttempts bounds how often a log issue is sent after answers that
// leave open whether it was created.
const createAttempts = 4

// create opens a log issue. After an answer that may hide a created issue
// (a 5xx, a reset, a timeout) it looks for the job's marker before sending
// again, so the issue is created once even when the answer is lost.
func (l *logIssues) create(ctx context.Context, jobID, title, body string, since time.Time, labels []string) (*github.Issue, error) {
	body = render.Inert(body) // thread text on the control repo never pings or loads
	for attempt := 1; ; attempt++ {
		is, _, err := l.gh.Issues.Create(ctx, l.owner, l.name, &github.IssueRequest{Title: &title, Body: &body, Labels: &labels})
		if err == nil {
			return is, nil
		}
		err = fmt.Errorf("create log issue in %s/%s: %w", l.owner, l.name, err)
		if jobID == "" || attempt == createAttempts || ctx.Err() != nil || !ghclient.Ambiguous(err) {
			return nil, err
		}
		found, ferr := l.find(ctx, jobID, since)
		if ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		if found != nil {
			return found, nil // it landed; only the answer was lost
		}
	}
}

func (l *logIssues) comment(ctx context.Context, number int, body string) error {
	body = render.Inert(body)
	if _, _, err := l.gh.Issues.CreateComment(ctx, l.owner, l.name, number, &github.IssueComment{Body: &body}); err != nil {
		return fmt.Errorf("comment on log issue %s/%s#%d: %w", l.owner, l.name, number, err)
	}
	return nil
}

// errorSection is the "## Error" part of a failed assemble, the message in
// a fence no backtick run inside it can close.
func errorSection(err error) string {
	heading := "## Error: Assemble Failed"
	if IsInvalidInput(err) {
		heading = "## Error: Invalid Context"
	}
	msg := redact.String(err.Error())
	fence := "```"
	for strings.Contains(msg, fence) {
		fence += "`"
	}
	return heading + "\n\n" + fence + "text\n" + msg + "\n" + fence + "\n"
}
