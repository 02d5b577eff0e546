package policy

import "fmt"

// Kind is what the agent wants to write.
type Kind string

const (
	KindComment     Kind = "comment"
	KindIssue       Kind = "issue"
	KindPullRequest Kind = "pull_request"
)

// Action is one write the agent asks for. Number is the issue/PR commented
// on; it is 0 for issue and pull request creation.
type Action struct {
	Kind   Kind   `json:"kind"`
	Repo   string `json:"repo"`
	Number int    `json:"number,omitempty"`
}

func (k Kind) noun() string {
	if k == KindPullRequest {
		return "pull request"
	}
	return string(k)
}

func (k Kind) plural() string { return k.noun() + "s" }

// count is "1 issue", "2 issues".
func (k Kind) count(n int) string {
	if n == 1 {
		return "1 " + k.noun()
	}
	return fmt.Sprintf("%d %s", n, k.plural())
}

func (a Action) String() string {
	switch a.Kind {
	case KindComment:
		return fmt.Sprintf("comment on %s#%d", a.Repo, a.Number)
	case KindIssue:
		return "issue in " + a.Repo
	case KindPullRequest:
		return "pull request in " + a.Repo
	}
	return fmt.Sprintf("%q action on %s", string(a.Kind), a.Repo)
}

// Rule codes name the rule a Decision is about.
const (
	RuleInvalidAction  = "invalid-action"
	RuleRepoBlocked    = "repo-blocked"
	RuleRepoDenied     = "repo-denied"
	RuleRepoNotAllowed = "repo-not-allowed"
	RuleHereOnly       = "here-only"
	RuleCommentOnly    = "comment-only"
	RuleIssueLimit     = "issue-limit"
	RulePRLimit        = "pr-limit"
	RuleCommentLimit   = "comment-limit"
	RuleMaxWrites      = "max-writes"
	RuleControlRepo    = "control-repo"
)

// Decision is the verdict on one Action. Rule is empty when allowed;
// Reason is a sentence both the model and a person can read.
type Decision struct {
	Allowed bool
	Rule    string
	Reason  string
}

func allow(format string, args ...any) Decision {
	return Decision{Allowed: true, Reason: "allowed: " + fmt.Sprintf(format, args...)}
}

func deny(rule, format string, args ...any) Decision {
	return Decision{Rule: rule, Reason: "denied: " + fmt.Sprintf(format, args...)}
}
