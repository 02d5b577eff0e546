package policy

import "fmt"

// Kind is what the agent wants to write.
type Kind string

const (
	KindComment     Kind = "comment"
	KindIssue       Kind = "issue"
	KindPullRequest Kind = "pull_request"
	// KindReview is one pull request review; it counts as a comment on
	// that pull request.
	KindReview Kind = "review"
	// KindPush is one commit pushed onto a pull request's own branch; it
	// counts as a pull request.
	KindPush Kind = "push"
	// KindLabels is one call adding or removing labels on an issue/PR;
	// Changes is how many labels it names.
	KindLabels Kind = "labels"
)

// Action is one write the agent asks for. Number is the issue/PR written
// on; it is 0 for issue and pull request creation. Changes is the number
// of labels a KindLabels action names (0 for every other kind).
type Action struct {
	Kind    Kind   `json:"kind"`
	Repo    string `json:"repo"`
	Number  int    `json:"number,omitempty"`
	Changes int    `json:"changes,omitempty"`
}

func (k Kind) noun() string {
	switch k {
	case KindPullRequest:
		return "pull request"
	case KindLabels:
		return "label change"
	}
	return string(k)
}

func (k Kind) known() bool {
	switch k {
	case KindComment, KindIssue, KindPullRequest, KindReview, KindPush, KindLabels:
		return true
	}
	return false
}

// withArticle is "a new issue in o/n", "a push to the branch of o/n#1",
// "2 label changes on o/n#1".
func (a Action) withArticle() string {
	switch a.Kind {
	case KindIssue, KindPullRequest:
		return "a new " + a.String()
	case KindLabels:
		return a.String()
	}
	return "a " + a.String()
}

// onThread is true for kinds that write on an existing issue/PR.
func (k Kind) onThread() bool {
	return k == KindComment || k == KindReview || k == KindPush || k == KindLabels
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
	case KindReview:
		return fmt.Sprintf("review of %s#%d", a.Repo, a.Number)
	case KindPush:
		return fmt.Sprintf("push to the branch of %s#%d", a.Repo, a.Number)
	case KindLabels:
		return fmt.Sprintf("%s on %s#%d", a.Kind.count(a.Changes), a.Repo, a.Number)
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
	RuleLabelLimit     = "label-limit"
	RuleAllowPush      = "allow-push"
	// RuleNotHere: pushes go only to the pull request where the mention
	// was made, labels only there or in a repository repo= names.
	RuleNotHere = "not-here"
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
