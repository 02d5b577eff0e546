package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// apply writes one re-checked entry. A refusal found only now (a pull
// request bundle that fails inspection) is returned instead of an error.
func (p *publisher) apply(ctx context.Context, e outputs.Entry) ([]Written, *render.Refusal, error) {
	switch e.Kind {
	case policy.KindComment:
		w, err := p.comment(ctx, e)
		return []Written{w}, nil, err
	case policy.KindIssue:
		w, err := p.issue(ctx, e)
		return []Written{w}, nil, err
	case policy.KindPullRequest:
		return p.pullRequest(ctx, e)
	case policy.KindPush:
		return p.push(ctx, e)
	case policy.KindReview:
		w, err := p.review(ctx, e)
		return []Written{w}, nil, err
	case policy.KindLabels:
		return p.labels(ctx, e, p.facts.Labels[strings.ToLower(e.Repo)])
	}
	// Recheck let through only the kinds above; this guards a future kind.
	r := refusal(e, policy.RuleInvalidAction, fmt.Sprintf("denied: publish cannot apply a %q write", e.Kind))
	return nil, &r, nil
}

func (p *publisher) comment(ctx context.Context, e outputs.Entry) (Written, error) {
	k := key{p.job.JobID, e.Index}
	owner, name := splitRepo(e.Repo)
	body := p.note.withNote(e.Body, e.Index)
	what := fmt.Sprintf("output %d: comment on %s#%d", e.Index, e.Repo, e.Number)
	f, existed, err := p.writeOnce(ctx, what,
		func(fresh bool) (found, bool, error) {
			return p.targets.comment(ctx, p.o.Bot, e.Repo, e.Number, p.o.BotLogin, k, fresh)
		},
		func() (found, error) {
			c, _, err := p.o.Bot.Issues.CreateComment(ctx, owner, name, e.Number, &github.IssueComment{Body: github.String(body)})
			if err != nil {
				return found{}, err
			}
			return found{number: e.Number, id: c.GetID(), url: c.GetHTMLURL()}, nil
		})
	if err != nil {
		return Written{}, err
	}
	p.targets.addComment(e.Repo, e.Number, k, f)
	return Written{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: e.Number, URL: f.url, Existing: existed}, nil
}

func (p *publisher) issue(ctx context.Context, e outputs.Entry) (Written, error) {
	k := key{p.job.JobID, e.Index}
	owner, name := splitRepo(e.Repo)
	req := &github.IssueRequest{
		Title: github.String(cutTitle(oneLine(redact.String(e.Title)))),
		Body:  github.String(p.note.withNote(e.Body, e.Index)),
	}
	if len(e.Labels) > 0 {
		labels := make([]string, 0, len(e.Labels))
		for _, l := range e.Labels {
			labels = append(labels, oneLine(redact.String(l)))
		}
		req.Labels = &labels
	}
	what := fmt.Sprintf("output %d: issue in %s", e.Index, e.Repo)
	f, existed, err := p.writeOnce(ctx, what,
		func(fresh bool) (found, bool, error) {
			return p.targets.issue(ctx, p.o.Bot, e.Repo, p.o.BotLogin, k, fresh)
		},
		func() (found, error) {
			is, _, err := p.o.Bot.Issues.Create(ctx, owner, name, req)
			if err != nil {
				return found{}, err
			}
			return found{number: is.GetNumber(), url: is.GetHTMLURL()}, nil
		})
	if err != nil {
		return Written{}, err
	}
	p.targets.addIssue(e.Repo, k, f)
	return Written{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: f.number, URL: f.url, Existing: existed}, nil
}

// oneLine folds a title to one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
