package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// react puts 😕 on what triggered a failed run, and 🚀 on a completed
// one only when nothing the run wrote is on the trigger's thread: an
// answer there already says the run finished, and a reaction is one of
// the bot account's writes (SPEC §3b). Reviews take no reactions; a
// repository that opted out gets none.
func (p *publisher) react(ctx context.Context) {
	content := "rocket"
	if p.res.Status != "completed" {
		content = "confused"
	} else if p.answeredOnThread() {
		return
	}
	j := p.job
	if p.pol.Blocker != nil {
		if _, blocked := p.pol.Blocker.Blocked(strings.ToLower(j.Repo)); blocked {
			return
		}
		if _, blocked := p.pol.Blocker.BlockedID(p.pol.IDs.Of(j.Repo)); blocked {
			return
		}
	}
	owner, name := splitRepo(j.Repo)
	var err error
	switch triggerKind(j.TriggerURL, j.TriggerNodeID) {
	case "issue_comment":
		_, _, err = p.o.Bot.Reactions.CreateIssueCommentReaction(ctx, owner, name, j.TriggerID, content)
	case "review_comment":
		_, _, err = p.o.Bot.Reactions.CreatePullRequestCommentReaction(ctx, owner, name, j.TriggerID, content)
	case "issue":
		_, _, err = p.o.Bot.Reactions.CreateIssueReaction(ctx, owner, name, j.Number, content)
	default:
		return
	}
	if err != nil {
		p.logf("reaction %s on the trigger: %v", content, err)
	}
}

// answeredOnThread reports whether a comment or review the run wrote is
// on the thread where the mention was made.
func (p *publisher) answeredOnThread() bool {
	for _, w := range p.res.Written {
		if (w.Kind == policy.KindComment || w.Kind == policy.KindReview) &&
			strings.EqualFold(w.Repo, p.job.Repo) && w.Number == p.job.Number {
			return true
		}
	}
	return false
}

// triggerKind tells what carried the mention, from its URL and node id.
func triggerKind(url, nodeID string) string {
	switch {
	case strings.Contains(url, "#issuecomment-") || strings.HasPrefix(nodeID, "IC_"):
		return "issue_comment"
	case strings.Contains(url, "#discussion_r") || strings.HasPrefix(nodeID, "PRRC_"):
		return "review_comment"
	case strings.Contains(url, "#pullrequestreview-") || strings.HasPrefix(nodeID, "PRR_"):
		return "review"
	}
	return "issue"
}

// noticeCause says in fixed words why a run wrote nothing: the thread is
// told the cause, never the engine's own text (that stays on the log issue).
func noticeCause(cause string, run AgentRun, nothingWritten bool, refused int, noRecord bool) string {
	switch {
	case noRecord:
		return "the agent job left no run record, so nothing it asked for could be published"
	case run.Local != nil:
		return "the agent job's machine could not write its files (a runner storage problem, not the agent)"
	case cause == contract.CauseLoop:
		return "the agent repeated the same tool call over and over, so the runner stopped it (loop detected)"
	case cause == contract.CauseTimeout:
		return "the agent ran past the run's time limit (MR_TIMEOUT) and was stopped"
	case cause == contract.CauseMaxTurns:
		if run.Turns > 0 {
			return fmt.Sprintf("the agent used all %d turns it was allowed (MR_MAX_TURNS) before finishing", run.Turns)
		}
		return "the agent used every turn it was allowed (MR_MAX_TURNS) before finishing"
	case cause == contract.CauseBudget:
		return "the agent spent the run's cost budget (MR_MAX_BUDGET_USD) before finishing"
	case cause == contract.CauseCrash:
		return "the agent's engine crashed"
	case refused == 1:
		return "the one write the agent asked for was refused when it was checked again before publishing (the run log says why)"
	case refused > 1:
		return fmt.Sprintf("each of the %d writes the agent asked for was refused when they were checked again before publishing (the run log says why)", refused)
	case nothingWritten:
		return "the agent finished without asking for any write and without saying why"
	}
	return "the agent's engine reported an error"
}

// notice tells the thread that the run wrote nothing and why, when the
// policy lets the bot comment there at all.
func (p *publisher) notice(ctx context.Context, why string) error {
	if p.polErr != nil {
		return nil // no trusted policy: write nothing
	}
	j := p.job
	if d := p.pol.Apply(policy.Action{Kind: policy.KindComment, Repo: j.Repo, Number: j.Number}, policy.NewLedger()); !d.Allowed {
		p.logf("no notice on %s#%d: %s", j.Repo, j.Number, d.Reason)
		return nil
	}
	k := noticeKey(j.JobID)
	link := fmt.Sprintf("%s/%s/issues/%d", strings.TrimSuffix(p.o.ServerURL, "/"), p.o.ControlRepo, p.res.LogIssue)
	text := fmt.Sprintf("This run ended without writing anything: %s. It counts as failed; the run log has the details: %s", why, link)
	body := render.WithNote(text, p.o.ControlRepo, p.res.LogIssue, p.o.BotLogin, k.job, k.index)
	owner, name := splitRepo(j.Repo)
	f, existed, err := p.writeOnce(ctx, fmt.Sprintf("no-write notice on %s#%d", j.Repo, j.Number),
		func(fresh bool) (found, bool, error) {
			return p.targets.comment(ctx, p.o.Bot, j.Repo, j.Number, p.o.BotLogin, k, fresh)
		},
		func() (found, error) {
			c, _, err := p.o.Bot.Issues.CreateComment(ctx, owner, name, j.Number, &github.IssueComment{Body: github.String(body)})
			if err != nil {
				return found{}, err
			}
			return found{number: j.Number, id: c.GetID(), url: c.GetHTMLURL()}, nil
		})
	if err != nil {
		return err
	}
	w := Written{Index: -1, Kind: policy.KindComment, Repo: j.Repo, Number: j.Number, URL: f.url, Existing: existed}
	p.res.Written = append(p.res.Written, w)
	p.writtenEvent(w)
	return nil
}
