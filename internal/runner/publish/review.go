package publish

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/prdiff"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/runner/checkout"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// gatherFacts gathers the trusted facts outputs.CheckFacts judges reviews and
// label changes by: the labels the trusted context lists and, when a
// review is queued, the pull request's diff read again from GitHub at the
// head sha the context recorded (the same read the fetch step made, by the
// same code, never the agent job's copy). A diff that cannot be read
// leaves NoDiff saying why: inline comments are then refused.
func (p *publisher) gatherFacts(ctx context.Context, entries []outputs.Entry) outputs.Facts {
	f := outputs.Facts{Here: p.job.Thread(), IsPR: p.job.IsPR}
	f.Labels, f.LabelsMissing = job.Labels(p.o.Context)
	if can, known := job.CanLabel(p.o.Context); known && !can {
		f.NoTriage = true
	}
	if !p.job.IsPR {
		return f
	}
	t, err := checkout.FromContext(p.o.Context)
	if err != nil {
		f.NoDiff = fmt.Sprintf("the trusted context names no pull request head: %v", err)
		return f
	}
	p.headSHA = t.HeadSHA // every review goes on the commit the mention saw
	wantDiff := false
	for _, e := range entries {
		wantDiff = wantDiff || (e.Kind == policy.KindReview && len(e.Comments) > 0)
	}
	switch {
	case !wantDiff:
		return f
	case t.BaseRef == "":
		f.NoDiff = "the trusted context records no base branch"
		return f
	}
	d, err := threadctx.FetchDiff(ctx, p.o.Bot, t.Repo, t.BaseRef, t.HeadSHA, p.o.MaxDiffBytes)
	switch {
	case err != nil:
		f.NoDiff = fmt.Sprintf("publish could not read it: %v", err)
	case d.Unavailable != "":
		f.NoDiff = "GitHub would not send it: " + d.Unavailable
	default:
		f.Diff = prdiff.Parse(d.Text)
	}
	return f
}

// review posts one review, event COMMENT, on the commit the context
// recorded, unless a review of the bot's on that pull request already
// carries this output's marker.
func (p *publisher) review(ctx context.Context, e outputs.Entry) (Written, error) {
	k := key{p.job.JobID, e.Index}
	owner, name := splitRepo(e.Repo)
	req := &github.PullRequestReviewRequest{
		Body:  github.String(p.note.withNote(e.Body, e.Index)),
		Event: github.String("COMMENT"),
	}
	if p.headSHA != "" {
		req.CommitID = github.String(p.headSHA)
	}
	for _, c := range e.Comments {
		dc := &github.DraftReviewComment{Path: github.String(c.Path), Body: github.String(c.Body), Line: github.Int(c.Line),
			Side: github.String(sideOf(c.Side))}
		if c.StartLine > 0 {
			dc.StartLine, dc.StartSide = github.Int(c.StartLine), github.String(sideOf(c.Side))
		}
		req.Comments = append(req.Comments, dc)
	}
	what := fmt.Sprintf("output %d: review of %s#%d", e.Index, e.Repo, e.Number)
	f, existed, err := p.writeOnce(ctx, what,
		func(bool) (found, bool, error) {
			return findReview(ctx, p.o.Bot, e.Repo, e.Number, p.o.BotLogin, k)
		},
		func() (found, error) {
			r, _, err := p.o.Bot.PullRequests.CreateReview(ctx, owner, name, e.Number, req)
			if err != nil {
				return found{}, err
			}
			return found{number: e.Number, id: r.GetID(), url: r.GetHTMLURL()}, nil
		})
	if err != nil {
		return Written{}, err
	}
	return Written{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: e.Number, URL: f.url, Existing: existed}, nil
}

func sideOf(s string) string {
	if s == "" {
		return prdiff.SideRight
	}
	return s
}

// findReview looks for k among the reviews author left on repo#number. A
// review is never edited into another, so one listing per look is enough.
func findReview(ctx context.Context, gh *github.Client, repo string, number int, author string, k key) (found, bool, error) {
	owner, name := splitRepo(repo)
	opt := &github.ListOptions{PerPage: perPage}
	for page := 0; page < maxPages; page++ {
		rs, resp, err := gh.PullRequests.ListReviews(ctx, owner, name, number, opt)
		if err != nil {
			return found{}, false, fmt.Errorf("list reviews on %s#%d: %w", repo, number, err)
		}
		for _, r := range rs {
			if !strings.EqualFold(r.GetUser().GetLogin(), author) {
				continue
			}
			if rk, ok := markerKey(r.GetBody()); ok && rk == k {
				return found{number: number, id: r.GetID(), url: r.GetHTMLURL()}, true, nil
			}
		}
		if resp.NextPage == 0 {
			return found{}, false, nil
		}
		opt.Page = resp.NextPage
	}
	return found{}, false, fmt.Errorf("list reviews on %s#%d: more than %d pages", repo, number, maxPages)
}

// labels adds or removes e's labels. It reads the thread's labels first
// and writes only what changes the thread: a label already there (or
// already gone) costs no write, and a retry after a lost answer reads
// again, so repeating the call never doubles anything. Every named label
// is recorded, spelt as the repository spells it. Before adding, it reads
// the repository's labels again: GitHub creates a label it is asked to add
// and does not have, so one deleted since the context was gathered is
// refused here, never re-created.
func (p *publisher) labels(ctx context.Context, e outputs.Entry, have []string) ([]Written, *render.Refusal, error) {
	owner, name := splitRepo(e.Repo)
	names := make([]string, 0, len(e.Labels))
	for _, l := range e.Labels {
		names = append(names, cmpOr(outputs.LabelName(have, l), l))
	}
	what := fmt.Sprintf("output %d: labels on %s#%d", e.Index, e.Repo, e.Number)
	var gone []string
	err := p.repeatIdempotent(ctx, what, func() error {
		on, err := issueLabels(ctx, p.o.Bot, e.Repo, e.Number)
		if err != nil {
			return err
		}
		var change []string
		for _, l := range names {
			if has := outputs.LabelName(on, l) != ""; has == e.Remove {
				change = append(change, l)
			}
		}
		if len(change) == 0 {
			return nil
		}
		if !e.Remove {
			live, err := repoLabels(ctx, p.o.Bot, e.Repo)
			if err != nil {
				return err
			}
			gone = gone[:0]
			for _, l := range change {
				if outputs.LabelName(live, l) == "" {
					gone = append(gone, l)
				}
			}
			if len(gone) > 0 {
				return nil
			}
			_, _, err = p.o.Bot.Issues.AddLabelsToIssue(ctx, owner, name, e.Number, change)
			return err
		}
		for _, l := range change {
			resp, err := p.o.Bot.Issues.RemoveLabelForIssue(ctx, owner, name, e.Number, url.PathEscape(l))
			if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
				return err // 404: gone already, which is what was asked
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(gone) > 0 {
		r := refusal(e, RuleNoSuchLabel, fmt.Sprintf("%s no longer has the label %q (deleted after the mention; labels are never created)", e.Repo, gone[0]))
		return nil, &r, nil
	}
	w := Written{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: e.Number,
		URL: fmt.Sprintf("%s/%s/issues/%d", strings.TrimSuffix(p.o.ServerURL, "/"), e.Repo, e.Number)}
	if e.Remove {
		w.Removed = names
	} else {
		w.Added = names
	}
	return []Written{w}, nil, nil
}

func issueLabels(ctx context.Context, gh *github.Client, repo string, number int) ([]string, error) {
	owner, name := splitRepo(repo)
	return readLabelNames(fmt.Sprintf("%s#%d", repo, number), func(opt *github.ListOptions) ([]*github.Label, *github.Response, error) {
		return gh.Issues.ListLabelsByIssue(ctx, owner, name, number, opt)
	})
}

// repoLabels lists the names of every label repo has.
func repoLabels(ctx context.Context, gh *github.Client, repo string) ([]string, error) {
	owner, name := splitRepo(repo)
	return readLabelNames(repo, func(opt *github.ListOptions) ([]*github.Label, *github.Response, error) {
		return gh.Issues.ListLabels(ctx, owner, name, opt)
	})
}

// readLabelNames reads every page list gives.
func readLabelNames(of string, list func(*github.ListOptions) ([]*github.Label, *github.Response, error)) ([]string, error) {
	opt := &github.ListOptions{PerPage: perPage}
	var out []string
	for page := 0; page < maxPages; page++ {
		ls, resp, err := list(opt)
		if err != nil {
			return nil, fmt.Errorf("list the labels of %s: %w", of, err)
		}
		for _, l := range ls {
			out = append(out, l.GetName())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
	return nil, fmt.Errorf("list the labels of %s: more than %d pages", of, maxPages)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
