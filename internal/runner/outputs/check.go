package outputs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// Rules a queued write can break before the policy judges it. The gate
// denies such a write at once; publish refuses it again.
const (
	RuleForgedMarker  = "forged-marker"
	RuleTooLong       = "too-long"
	RuleInvalidBundle = "invalid-bundle"
	RulePRWrongRepo   = "pr-wrong-repo"
	RulePRWrongBase   = "pr-wrong-base"
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
	case policy.KindComment, policy.KindIssue, policy.KindPullRequest, KindNoop:
	default:
		return deny(policy.RuleInvalidAction, "%q is not a kind of write (comment, issue, pull_request or noop)", string(e.Kind))
	}
	texts := append([]string{e.Body, e.Title, e.Base, e.Reason, e.Repo, e.Bundle}, e.Labels...)
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
	for _, l := range e.Labels {
		if strings.TrimSpace(l) == "" || utf8.RuneCountInString(l) > contract.AgentLabelChars || strings.ContainsAny(l, "\r\n") {
			return deny(policy.RuleInvalidAction, "each label must be a non-empty single line of at most %d characters", contract.AgentLabelChars)
		}
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
	}
	return nil
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
