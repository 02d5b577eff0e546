package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Decide checks a against the policy and what the run already did. It does
// not record. Rules run in a fixed order and the first failing one is
// reported: invalid action, opt-out block, deny, allow-list,
// here-only/comment-only, limits. A nil ledger counts as empty.
func (p Policy) Decide(a Action, l *Ledger) Decision {
	if l == nil {
		l = NewLedger()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return p.decide(a, l)
}

// Apply decides and, when allowed, records a in the same step, so
// concurrent callers cannot both take the last slot. A nil ledger counts as
// empty and records nothing.
func (p Policy) Apply(a Action, l *Ledger) Decision {
	if l == nil {
		return p.Decide(a, nil)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d := p.decide(a, l)
	if d.Allowed {
		l.record(a)
	}
	return d
}

// decide runs with l locked.
func (p Policy) decide(a Action, l *Ledger) Decision {
	if d, bad := invalid(a); bad {
		return d
	}
	repo := strings.ToLower(a.Repo)
	ids := p.IDs.Of(repo)
	if p.ControlRepo != "" && strings.EqualFold(repo, p.ControlRepo) {
		return deny(RuleControlRepo, "%s is the control repository: only the runner writes there (the run log), never the agent", a.Repo)
	}
	// GitHub redirects a renamed or transferred repository's old name: the
	// control repository is matched by id too.
	if c := p.IDs.Of(p.ControlRepo).Repo; c != 0 && ids.Repo == c {
		return deny(RuleControlRepo, "%s is the control repository %s under another name (renamed or transferred): only the runner writes there, never the agent", a.Repo, p.ControlRepo)
	}
	if p.Blocker != nil {
		if pattern, blocked := p.Blocker.Blocked(repo); blocked {
			return deny(RuleRepoBlocked, "%s is blocked by the opt-out entry %q (its owner asked the bot to go away)", a.Repo, pattern)
		}
		if pattern, blocked := p.Blocker.BlockedID(ids); blocked {
			return deny(RuleRepoBlocked, "%s is blocked by the opt-out entry %q (same repository or owner id: renamed or transferred)", a.Repo, pattern)
		}
	}
	// EqualFold, not Contains: a Policy decoded from JSON may not be lower-cased.
	if containsFold(p.DenyRepos, repo) {
		return deny(RuleRepoDenied, "deny=%s forbids writing to %s", repo, a.Repo)
	}
	if d, denied := p.deniedID(ids); denied {
		return deny(RuleRepoDenied, "deny=%s forbids writing to %s (the same repository under another name)", d, a.Repo)
	}
	if len(p.AllowRepos) > 0 && !containsFold(p.AllowRepos, repo) {
		return deny(RuleRepoNotAllowed, "writes are allowed only to %s, not to %s", strings.Join(p.AllowRepos, ", "), a.Repo)
	}
	if p.HereOnly {
		switch {
		case a.Kind != KindComment && a.Kind != KindReview:
			return deny(RuleHereOnly, "here-only allows comments and reviews only on %s, not %s", p.hereName(), a.withArticle())
		case !p.Here.is(a.Repo, a.Number):
			return deny(RuleHereOnly, "here-only allows comments only on %s, not on %s#%d", p.hereName(), a.Repo, a.Number)
		}
	}
	if p.CommentOnly && a.Kind != KindComment && a.Kind != KindReview {
		return deny(RuleCommentOnly, "comment-only allows comments and reviews only, not %s", a.withArticle())
	}
	if a.Kind == KindPush {
		if !p.AllowPush {
			return deny(RuleAllowPush, "pushing to a pull request's branch is turned off by the operator (allow-push); open a pull request instead")
		}
		if !p.Here.is(a.Repo, a.Number) {
			return deny(RuleNotHere, "a push may go only to the branch of %s, where the mention was made, not to %s#%d", p.hereName(), a.Repo, a.Number)
		}
	}
	if a.Kind == KindLabels && !p.Here.is(a.Repo, a.Number) && !containsFold(p.AllowRepos, repo) {
		return deny(RuleNotHere, "labels may be changed only on %s, where the mention was made, or in a repository a repo= flag names, not on %s#%d", p.hereName(), a.Repo, a.Number)
	}
	if l.total >= p.MaxWrites {
		return limitDenial(RuleMaxWrites, "", p.MaxWrites, l.total, "")
	}
	switch a.Kind {
	case KindIssue:
		if l.issues >= p.IssueLimit {
			return limitDenial(RuleIssueLimit, a.Kind, p.IssueLimit, l.issues, "")
		}
		return allow("new issue in %s (%d of %d for this run)", a.Repo, l.issues+1, p.IssueLimit)
	case KindPullRequest:
		if l.prs >= p.PRLimit {
			return limitDenial(RulePRLimit, a.Kind, p.PRLimit, l.prs, "")
		}
		return allow("new pull request in %s (%d of %d for this run)", a.Repo, l.prs+1, p.PRLimit)
	case KindPush:
		if l.prs >= p.PRLimit {
			if p.PRLimit == 0 {
				return deny(RulePRLimit, "a push counts as a pull request, and no pull requests may be made in this run (pr-limit is 0: no-pr, pr-limit=0 or the operator)")
			}
			return deny(RulePRLimit, "a push counts as a pull request; pr-limit is %d and this run already made %s", p.PRLimit, KindPullRequest.count(l.prs))
		}
		return allow("push to the branch of %s#%d (%d of %d pull requests for this run)", a.Repo, a.Number, l.prs+1, p.PRLimit)
	case KindLabels:
		if l.labels+a.Changes > p.LabelLimit {
			if p.LabelLimit == 0 {
				return deny(RuleLabelLimit, "no labels may be changed in this run (label-limit is 0)")
			}
			return deny(RuleLabelLimit, "label-limit is %d label changes per run; this run already made %d and this call names %d", p.LabelLimit, l.labels, a.Changes)
		}
		return allow("%s on %s#%d (%d of %d label changes for this run)", a.Kind.count(a.Changes), a.Repo, a.Number, l.labels+a.Changes, p.LabelLimit)
	default: // comment or review; invalid() rejected every other kind
		n := l.comments[l.keyOf(a.Repo, a.Number)]
		if n >= p.CommentLimit {
			return limitDenial(RuleCommentLimit, a.Kind, p.CommentLimit, n, fmt.Sprintf(" on %s#%d", a.Repo, a.Number))
		}
		if a.Kind == KindReview {
			return allow("review of %s#%d (counts as comment %d of %d on this thread)", a.Repo, a.Number, n+1, p.CommentLimit)
		}
		return allow("comment on %s#%d (%d of %d on this thread)", a.Repo, a.Number, n+1, p.CommentLimit)
	}
}

func containsFold(list []string, repo string) bool {
	return slices.ContainsFunc(list, func(r string) bool { return strings.EqualFold(r, repo) })
}

func limitDenial(rule string, k Kind, limit, done int, where string) Decision {
	if k == "" { // all writes together
		if limit == 0 {
			return deny(rule, "no writes may be made in this run (%s is 0)", rule)
		}
		return deny(rule, "%s is %d and this run already made %d writes (comments, reviews, issues, pull requests, pushes and label calls together)", rule, limit, done)
	}
	participle, past := "created", "created"
	if k == KindComment {
		participle, past = "written", "wrote"
	}
	if limit == 0 {
		return deny(rule, "no %s may be %s in this run (%s is 0)", k.plural(), participle, rule)
	}
	return deny(rule, "%s is %d and this run already %s %s%s", rule, limit, past, k.count(done), where)
}

// invalid rejects actions no rule can judge: unknown kind, bad repo name, a
// comment without a thread, or a creation that names one.
func invalid(a Action) (Decision, bool) {
	switch {
	case !a.Kind.known():
		return deny(RuleInvalidAction, "unknown action kind %q (want comment, review, issue, pull_request, push or labels)", shorten(string(a.Kind))), true
	case !ValidRepo(a.Repo):
		return deny(RuleInvalidAction, "%q is not a repository name of the form owner/name", shorten(a.Repo)), true
	case a.Kind.onThread() && a.Number <= 0:
		return deny(RuleInvalidAction, "a %s needs the number of the issue or pull request it goes on, got %d", a.Kind.noun(), a.Number), true
	case !a.Kind.onThread() && a.Number != 0:
		return deny(RuleInvalidAction, "creating a new %s takes no number, got %d", a.Kind.noun(), a.Number), true
	case a.Kind == KindLabels && (a.Changes < 1 || a.Changes > MaxLimit):
		return deny(RuleInvalidAction, "a label change names 1 to %d labels, got %d", MaxLimit, a.Changes), true
	case a.Kind != KindLabels && a.Changes != 0:
		return deny(RuleInvalidAction, "only a label change names a count of labels, got %d", a.Changes), true
	}
	return Decision{}, false
}

func (p Policy) hereName() string {
	if p.Here.Repo == "" {
		return "the triggering issue or pull request"
	}
	return p.Here.String()
}
