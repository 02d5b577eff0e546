package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/checkout"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// Branch is the PR branch for one output: deterministic, so a re-run
// pushes to the same place.
func Branch(jobID string, index int) string {
	prefix := jobID
	if len(prefix) > 8 {
		prefix = prefix[:8]
	}
	return fmt.Sprintf("mention-runner/%s-%d", prefix, index)
}

// pullRequest inspects the bundle again, pushes it with git and opens the
// pull request, unless one carrying this output's marker exists already.
func (p *publisher) pullRequest(ctx context.Context, e outputs.Entry) ([]Written, *render.Refusal, error) {
	k := key{p.job.JobID, e.Index}
	what := fmt.Sprintf("output %d: pull request in %s", e.Index, e.Repo)
	if f, ok, err := p.targets.issue(ctx, p.o.Bot, e.Repo, p.o.BotLogin, k, false); err != nil {
		return nil, nil, fmt.Errorf("%s: look for an earlier write: %w", what, err)
	} else if ok {
		return []Written{{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: f.number, URL: f.url, Existing: true}}, nil, nil
	}
	owner, name := splitRepo(e.Repo)
	target, _, err := p.o.Bot.Repositories.Get(ctx, owner, name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: read the repository: %w", what, err)
	}
	// The base is derived again from trusted data, never read from the
	// queue: the queue may only leave it out or name the same branch.
	base := threadBase(p.o.Context, target.GetDefaultBranch())
	if inv := outputs.CheckBase(e, base); inv != nil {
		r := refusal(e, inv.Rule, inv.Reason)
		return nil, &r, nil
	}
	if base == "" || strings.HasPrefix(base, "-") || strings.ContainsAny(base, " \t\n:~^?*[\\") {
		r := refusal(e, RuleBundleRejected, fmt.Sprintf("denied: %q is not a usable base branch", base))
		return nil, &r, nil
	}
	work, err := os.MkdirTemp("", "mention-runner-publish-")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer os.RemoveAll(work)
	g := git{token: p.o.Git.Token, base: p.o.Git.BaseURL, home: work}
	repoDir := filepath.Join(work, "repo.git")
	if _, err := g.run(ctx, work, false, "init", "--quiet", "--bare", repoDir); err != nil {
		return nil, nil, fmt.Errorf("%s: scratch repository: %w", what, err)
	}
	if _, err := g.run(ctx, repoDir, true, "fetch", "--quiet", "--no-tags", p.repoURL(e.Repo), "+refs/heads/"+base+":refs/remotes/target/"+base); err != nil {
		return nil, nil, fmt.Errorf("%s: fetch base branch %s: %w", what, base, err)
	}
	// git runs in the clone's directory: a relative run dir (the workflow's
	// runs/) must not be read from there
	bundle, err := filepath.Abs(filepath.Join(p.o.RunDir, e.Bundle))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: bundle path: %w", what, err)
	}
	info, refused := p.inspect(ctx, e, repoDir, bundle)
	if refused != nil {
		return nil, refused, nil
	}
	// inspect fetched the bundle's commits into repoDir: the push sends
	// the head it checked
	branch := Branch(p.job.JobID, e.Index)
	headRepo := e.Repo
	if !p.o.Git.AllowPushToTarget {
		if headRepo, err = p.fork(ctx, g, repoDir, e.Repo); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	// --force: the branch belongs to this job and output; a re-run of an
	// interrupted publish may find it already there.
	if _, err := g.run(ctx, repoDir, true, "push", "--quiet", "--force", p.repoURL(headRepo), info.HeadSHA+":refs/heads/"+branch); err != nil {
		return nil, nil, fmt.Errorf("%s: push %s to %s: %w", what, branch, headRepo, err)
	}
	head := branch
	if !strings.EqualFold(headRepo, e.Repo) {
		headOwner, _ := splitRepo(headRepo)
		head = headOwner + ":" + branch
	}
	req := &github.NewPullRequest{
		Title: github.String(cutTitle(oneLine(redact.String(e.Title)))),
		Head:  github.String(head),
		Base:  github.String(base),
		Body:  github.String(p.note.withNote(e.Body, e.Index)),
		Draft: github.Bool(e.Draft),
	}
	f, existed, err := p.writeOnce(ctx, what,
		func(fresh bool) (found, bool, error) {
			return p.targets.issue(ctx, p.o.Bot, e.Repo, p.o.BotLogin, k, fresh)
		},
		func() (found, error) {
			pr, resp, err := p.o.Bot.PullRequests.Create(ctx, owner, name, req)
			if err != nil {
				if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
					// "A pull request already exists": ours from an
					// interrupted run, found by its marker
					if f, ok, ferr := p.targets.issue(ctx, p.o.Bot, e.Repo, p.o.BotLogin, k, true); ferr == nil && ok {
						return f, nil
					}
				}
				return found{}, err
			}
			return found{number: pr.GetNumber(), url: pr.GetHTMLURL()}, nil
		})
	if err != nil {
		return nil, nil, err
	}
	p.targets.addIssue(e.Repo, k, f)
	w := []Written{{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: f.number, URL: f.url, Existing: existed, HeadRepo: headRepo}}
	return w, nil, nil
}

// threadBase is the branch pull requests from the thread of the trusted
// context go into (checkout.Target.StackedBase, as the agent job's gate
// was told): a same-repository pull request's head branch, else the
// default branch — the context's, or liveDefault (the repository as it is
// now) when the context did not record it. "" when the context names no
// thread.
func threadBase(context []byte, liveDefault string) string {
	t, err := checkout.FromContext(context)
	if err != nil {
		return ""
	}
	if t.DefaultBranch == "" {
		t.DefaultBranch = liveDefault
	}
	return t.StackedBase()
}

// inspect checks the bundle again: it must apply on the base, hold commits,
// stay under the size cap, leave workflows alone unless allowed, and be the
// commits the gate queued.
func (p *publisher) inspect(ctx context.Context, e outputs.Entry, repoDir, bundle string) (prbundle.Info, *render.Refusal) {
	reject := func(rule, format string, a ...any) (prbundle.Info, *render.Refusal) {
		r := refusal(e, rule, "denied: "+fmt.Sprintf(format, a...))
		return prbundle.Info{}, &r
	}
	max := p.o.Git.MaxBundleBytes
	if max <= 0 {
		max = prbundle.DefaultMaxBytes
	}
	st, err := os.Stat(bundle)
	if err != nil {
		return reject(RuleBundleRejected, "the bundle %s is missing from the run record", e.Bundle)
	}
	if st.Size() > max {
		return reject(RuleBundleTooLarge, "the bundle is %d bytes, over the %d-byte limit", st.Size(), max)
	}
	// repoDir is this job's scratch repository: the bundle is fetched
	// into it once, checked there, and pushed from there
	info, err := prbundle.InspectInto(ctx, repoDir, bundle)
	var special *prbundle.SpecialEntryError
	if errors.As(err, &special) {
		return reject(RuleSpecialEntry, "%s", special.Error())
	}
	if err != nil {
		return reject(RuleBundleRejected, "the bundle does not apply on the base branch: %v", err)
	}
	switch {
	case len(info.Commits) == 0:
		return reject(RuleBundleRejected, "the bundle holds no commits")
	case info.TouchesWorkflows && !p.o.Git.AllowWorkflowChanges:
		return reject(RuleWorkflowChanges, "the commits change files under .github/ (%s: workflows, the actions and settings they use) and such changes are not allowed", strings.Join(prbundle.WorkflowPaths(info.Paths), ", "))
	case e.HeadSHA != "" && !strings.EqualFold(e.HeadSHA, info.HeadSHA):
		return reject(RuleBundleRejected, "the bundle's head is %s but the gate queued %s", info.HeadSHA, e.HeadSHA)
	}
	return info, nil
}

// fork makes sure the bot has a fork of repo (creating one is idempotent)
// and waits until its git is reachable.
func (p *publisher) fork(ctx context.Context, g git, repoDir, repo string) (string, error) {
	owner, name := splitRepo(repo)
	f, _, err := p.o.Bot.Repositories.CreateFork(ctx, owner, name, &github.RepositoryCreateForkOptions{})
	var accepted *github.AcceptedError
	if err != nil && !errors.As(err, &accepted) {
		return "", fmt.Errorf("fork %s: %w", repo, err)
	}
	full := f.GetFullName()
	if full == "" {
		return "", fmt.Errorf("fork %s: GitHub did not name the fork", repo)
	}
	// a new fork's git may take a moment to appear; count polls rather
	// than read the clock, so a test's instant sleep cannot spin
	for waited := time.Duration(0); ; waited += p.o.Git.ForkPoll {
		_, lerr := g.run(ctx, repoDir, true, "ls-remote", "--heads", p.repoURL(full))
		if lerr == nil {
			return full, nil
		}
		if waited >= p.o.Git.ForkTimeout {
			return "", fmt.Errorf("fork %s is not reachable after %s: %w", full, p.o.Git.ForkTimeout, lerr)
		}
		if err := p.o.sleep(ctx, p.o.Git.ForkPoll); err != nil {
			return "", fmt.Errorf("wait for fork %s: %w", full, err)
		}
	}
}

func (p *publisher) repoURL(repo string) string {
	base := p.o.Git.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return base + repo + ".git"
}
