package outputs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/prdiff"
)

// Rules a queued write can break before the policy judges it. The gate
// denies such a write at once; publish refuses it again.
const (
	RuleForgedMarker  = "forged-marker"
	RuleTooLong       = "too-long"
	RuleInvalidBundle = "invalid-bundle"
	RulePRWrongRepo   = "pr-wrong-repo"
	RulePRWrongBase   = "pr-wrong-base"
	// RuleReviewWrongPR: a review goes only on the pull request where the
	// mention was made (the diff the run recorded is that one's).
	RuleReviewWrongPR = "review-wrong-pr"
	// RulePushNotPR: a push goes only onto the branch of the pull request
	// where the mention was made.
	RulePushNotPR = "push-not-pr"
	// RuleNoDiff: the run has no diff to place inline comments on.
	RuleNoDiff = "no-diff"
	// RuleNotInDiff: an inline comment's path or line is not in the diff.
	RuleNotInDiff = "not-in-diff"
	// RuleReviewComments: more inline comments than review-comment-limit.
	RuleReviewComments = "review-comment-limit"
	// RuleNoSuchLabel: a label the repository does not have.
	RuleNoSuchLabel = "no-such-label"
	// RuleLabelsUnknown: the run does not know the repository's labels.
	RuleLabelsUnknown = "labels-unknown"
	// RuleNoTriage: the bot lacks the triage role GitHub requires.
	RuleNoTriage = "no-triage"
)

// Invalid is a queued write that must not be applied, whatever the policy.
type Invalid struct {
	Rule   string
	Reason string // starts with "denied: ", names what to change
}

// Check is the one validation of a queued write, shared by the gate (before
// it queues e) and publish (before it applies e): a mention-runner marker
// anywhere in its text (it could pass itself off as another write), a field
// over its limit, a missing title, a pull request on any repository but
// here (the target, whose checkout holds the commits) or whose bundle is not
// the file the gate wrote for e.Index. nil = e may go on to the policy.
func Check(e Entry, here string) *Invalid {
	deny := func(rule, format string, a ...any) *Invalid {
		return &Invalid{Rule: rule, Reason: "denied: " + fmt.Sprintf(format, a...)}
	}
	switch e.Kind {
	case policy.KindComment, policy.KindIssue, policy.KindPullRequest, policy.KindReview, policy.KindPush, policy.KindLabels, KindNoop:
	default:
		return deny(policy.RuleInvalidAction, "%q is not a kind of write (comment, issue, pull_request, review, push, labels or noop)", string(e.Kind))
	}
	texts := append([]string{e.Body, e.Title, e.Base, e.Reason, e.Repo, e.Bundle}, e.Labels...)
	for _, c := range e.Comments {
		texts = append(texts, c.Path, c.Side, c.Body)
	}
	for _, s := range texts {
		if contract.HasMarker(s) {
			return deny(RuleForgedMarker, "the text carries a mention-runner marker (%q), which only the runner may write; leave it out", "mention-runner:")
		}
	}
	for _, f := range []struct {
		name  string
		value string
		max   int
	}{{"body", e.Body, contract.AgentBodyChars}, {"title", e.Title, contract.AgentTitleChars}, {"reason", e.Reason, contract.AgentReasonChars}} {
		if n := utf8.RuneCountInString(f.value); n > f.max {
			return deny(RuleTooLong, "the %s is %d characters; the limit is %d", f.name, n, f.max)
		}
	}
	if strings.ContainsAny(e.Title, "\r\n") {
		return deny(policy.RuleInvalidAction, "the title must be a single line")
	}
	if len(e.Labels) > contract.AgentLabels {
		return deny(RuleTooLong, "%d labels; at most %d", len(e.Labels), contract.AgentLabels)
	}
	seen := map[string]bool{}
	for _, l := range e.Labels {
		if strings.TrimSpace(l) == "" || utf8.RuneCountInString(l) > contract.AgentLabelChars || strings.ContainsAny(l, "\r\n") {
			return deny(policy.RuleInvalidAction, "each label must be a non-empty single line of at most %d characters", contract.AgentLabelChars)
		}
		if k := strings.ToLower(l); seen[k] {
			return deny(policy.RuleInvalidAction, "the label %q is named twice", l)
		} else {
			seen[k] = true
		}
	}
	if e.Kind != policy.KindReview && len(e.Comments) > 0 {
		return deny(policy.RuleInvalidAction, "only a review has inline comments")
	}
	if e.Kind != policy.KindLabels && e.Remove {
		return deny(policy.RuleInvalidAction, "only a label change removes labels")
	}
	switch e.Kind {
	case policy.KindIssue:
		if strings.TrimSpace(e.Title) == "" {
			return deny(policy.RuleInvalidAction, "an issue needs a title")
		}
	case policy.KindPullRequest:
		if here == "" || !strings.EqualFold(e.Repo, here) {
			return deny(RulePRWrongRepo, "pull requests can only be opened on %s, the repository the agent's commits were made on, not on %s", here, e.Repo)
		}
		if strings.TrimSpace(e.Title) == "" {
			return deny(policy.RuleInvalidAction, "a pull request needs a title")
		}
		if want := contract.BundleFile(e.Index); e.Bundle != want {
			return deny(RuleInvalidBundle, "the bundle %q is not %s, the file the gate wrote for output #%d", e.Bundle, want, e.Index)
		}
	case policy.KindPush:
		if here == "" || !strings.EqualFold(e.Repo, here) {
			return deny(RulePRWrongRepo, "a push can go only to a pull request of %s, the repository the agent's commit was made on, not of %s", here, e.Repo)
		}
		if strings.TrimSpace(e.Title) == "" {
			return deny(policy.RuleInvalidAction, "a push needs a commit message (title)")
		}
		if want := contract.BundleFile(e.Index); e.Bundle != want {
			return deny(RuleInvalidBundle, "the bundle %q is not %s, the file the gate wrote for output #%d", e.Bundle, want, e.Index)
		}
	case policy.KindReview:
		if strings.TrimSpace(e.Body) == "" {
			return deny(policy.RuleInvalidAction, "a review needs a summary body")
		}
		if len(e.Comments) > contract.AgentReviewCommentsMax {
			return deny(RuleReviewComments, "the review has %d inline comments; no review may have more than %d", len(e.Comments), contract.AgentReviewCommentsMax)
		}
		for i, c := range e.Comments {
			if strings.TrimSpace(c.Body) == "" {
				return deny(policy.RuleInvalidAction, "inline comment %d (%s line %d) has no body", i+1, clip(c.Path, 80), c.Line)
			}
			if n := utf8.RuneCountInString(c.Body); n > contract.AgentBodyChars {
				return deny(RuleTooLong, "inline comment %d is %d characters; the limit is %d", i+1, n, contract.AgentBodyChars)
			}
		}
	case policy.KindLabels:
		if len(e.Labels) == 0 {
			return deny(policy.RuleInvalidAction, "a label change names at least one label")
		}
	}
	if e.Kind == policy.KindIssue || e.Kind == policy.KindPullRequest {
		return nil
	}
	if e.Kind != KindNoop && e.Number <= 0 {
		return deny(policy.RuleInvalidAction, "a %s needs the number of the issue or pull request it goes on", e.Kind)
	}
	return nil
}

// Facts are the trusted facts of the run that the new kinds of write are
// checked against, gathered by the gate from what the agent job was handed
// and by publish from the trusted context and GitHub, and judged by the
// one CheckFacts.
type Facts struct {
	// Here is the thread where the mention was made; IsPR says whether it
	// is a pull request.
	Here policy.Thread
	IsPR bool
	// Diff is that pull request's diff at the head sha the context
	// recorded (nil: none; NoDiff says why).
	Diff   *prdiff.Files
	NoDiff string
	// Labels are the label names each repository has, by lower-case
	// owner/name (a repository missing: its labels are not known).
	Labels map[string][]string
	// LabelsMissing says, by lower-case owner/name, why the labels of a
	// repository repo= names were not gathered (not readable by the bot,
	// private while the control repository is public).
	LabelsMissing map[string]string
	// NoTriage: the context says the bot has no triage role on Here's
	// repository, so GitHub would refuse its label changes there.
	NoTriage bool
}

// CheckFacts is the one check of a review or label change against the
// run's trusted facts, shared by the gate and publish: a review goes on
// the pull request where the mention was made, with at most the policy's
// review-comment-limit inline comments, each on a line of the recorded
// diff; a label change names only labels its repository has. nil = e may
// go on to the policy. Other kinds pass.
func CheckFacts(e Entry, f Facts, p policy.Policy) *Invalid {
	deny := func(rule, format string, a ...any) *Invalid {
		return &Invalid{Rule: rule, Reason: "denied: " + fmt.Sprintf(format, a...)}
	}
	switch e.Kind {
	case policy.KindReview:
		if !f.IsPR || f.Here.Number != e.Number || !strings.EqualFold(f.Here.Repo, e.Repo) {
			return deny(RuleReviewWrongPR, "a review can go only on the pull request where the mention was made (%s), whose diff this run recorded, not on %s#%d", f.here(), e.Repo, e.Number)
		}
		if len(e.Comments) > p.ReviewComments {
			return deny(RuleReviewComments, "the review has %d inline comments; review-comment-limit allows %d per review (put the rest in the summary, or fewer, weightier comments)", len(e.Comments), p.ReviewComments)
		}
		if len(e.Comments) > 0 && f.Diff == nil {
			why := f.NoDiff
			if why == "" {
				why = "none was recorded"
			}
			return deny(RuleNoDiff, "this run has no diff of %s to place inline comments on (%s); post the review without inline comments", f.here(), why)
		}
		for i, c := range e.Comments {
			if err := f.Diff.Check(c.Path, c.Line, c.StartLine, c.Side, ""); err != nil {
				return deny(RuleNotInDiff, "inline comment %d: %v", i+1, err)
			}
		}
	case policy.KindPush:
		if !f.IsPR || f.Here.Number != e.Number || !strings.EqualFold(f.Here.Repo, e.Repo) {
			return deny(RulePushNotPR, "a push can go only onto the branch of the pull request where the mention was made (%s), not %s#%d", f.here(), e.Repo, e.Number)
		}
	case policy.KindLabels:
		if f.NoTriage && strings.EqualFold(e.Repo, f.Here.Repo) {
			return deny(RuleNoTriage, "the bot does not have the triage role on %s, which GitHub requires to change labels; say in a comment which labels fit instead", e.Repo)
		}
		have, ok := f.Labels[strings.ToLower(e.Repo)]
		if why := f.LabelsMissing[strings.ToLower(e.Repo)]; !ok && why != "" {
			return deny(RuleLabelsUnknown, "the labels of %s were not readable when the mention was read (%s), so no label there can be checked; say in a comment which labels fit instead", e.Repo, why)
		}
		if !ok {
			return deny(RuleLabelsUnknown, "this run does not know the labels of %s (they are gathered for the mention's repository and for at most %d repositories repo= flags name, the first in alphabetical order)", e.Repo, contract.MaxLabelRepos)
		}
		for _, l := range e.Labels {
			if LabelName(have, l) == "" {
				return deny(RuleNoSuchLabel, "%s has no label %q (labels are never created); its labels: %s", e.Repo, clip(l, 60), labelList(have))
			}
		}
	}
	return nil
}

func (f Facts) here() string {
	if f.Here.Repo == "" {
		return "the triggering pull request"
	}
	return f.Here.String()
}

// LabelName is the repository's own spelling of label l (GitHub matches
// label names ignoring case), "" when have lacks it.
func LabelName(have []string, l string) string {
	for _, h := range have {
		if strings.EqualFold(h, l) {
			return h
		}
	}
	return ""
}

func labelList(have []string) string {
	if len(have) == 0 {
		return "(none)"
	}
	qs := make([]string, 0, min(len(have), 30))
	for _, h := range have[:min(len(have), 30)] {
		qs = append(qs, fmt.Sprintf("%q", clip(h, 60)))
	}
	if len(have) > 30 {
		qs = append(qs, fmt.Sprintf("and %d more", len(have)-30))
	}
	return strings.Join(qs, ", ")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// CheckBase is the one check of a pull request's base, shared by the gate
// and publish: want is the branch pull requests from this thread go into,
// derived by each from trusted thread facts (checkout.Target.StackedBase:
// a same-repository pull request's head branch, else the default branch),
// never from the queue. An empty e.Base means want; any other base is
// refused, so a queue edited to name another branch opens nothing.
func CheckBase(e Entry, want string) *Invalid {
	if e.Kind != policy.KindPullRequest {
		return nil
	}
	if want == "" {
		return &Invalid{Rule: RulePRWrongBase, Reason: "denied: the branch pull requests from this thread go into is not known (the thread's facts do not say), so no pull request can be opened"}
	}
	if e.Base != "" && e.Base != want {
		return &Invalid{Rule: RulePRWrongBase, Reason: fmt.Sprintf("denied: pull requests from this thread go into %q (the pull request's own branch when it is in this repository, else the default branch), not %q; leave the base out", want, e.Base)}
	}
	return nil
}
