package policy

import (
	"fmt"
	"slices"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// ToolVerdict says whether the policy lets the agent use one gate tool in
// this run at all, and why, in words for the prompt and `dispatcher
// explain`. Allowed tools may still be denied call by call (limits,
// repositories, the diff, the labels).
type ToolVerdict struct {
	Tool    string `json:"tool"`
	Allowed bool   `json:"allowed"`
	Why     string `json:"why"`
}

// Tools is the verdict on each gate tool the gate serves (contract.GateTools),
// in that order. isPR says whether the trigger thread is a pull request
// (reviews and pushes need one); pass true when it is not known.
func (p Policy) Tools(isPR bool) []ToolVerdict {
	here := p.hereName()
	pr := "the pull request where the mention was made"
	if p.Here.Repo != "" {
		pr = p.Here.String()
	}
	var out []ToolVerdict
	add := func(tool string, ok bool, format string, a ...any) {
		if slices.Contains(contract.GateTools, tool) {
			out = append(out, ToolVerdict{Tool: tool, Allowed: ok, Why: fmt.Sprintf(format, a...)})
		}
	}
	switch {
	case p.MaxWrites == 0:
		add(contract.ToolAddComment, false, "max-writes is 0: no write at all")
	case p.CommentLimit == 0:
		add(contract.ToolAddComment, false, "comment-limit is 0")
	case p.HereOnly:
		add(contract.ToolAddComment, true, "only on %s (here-only), at most %d", here, p.CommentLimit)
	default:
		add(contract.ToolAddComment, true, "at most %d on any one issue or pull request", p.CommentLimit)
	}
	creation := func(tool string, limit int, noun, flag string) {
		switch {
		case p.HereOnly:
			add(tool, false, "here-only allows comments only")
		case p.CommentOnly:
			add(tool, false, "comment-only allows comments only")
		case limit == 0:
			add(tool, false, "%s is 0 (%s, %s=0 or the operator)", flag, "no-"+noun, flag)
		default:
			add(tool, true, "at most %d in this run", limit)
		}
	}
	creation(contract.ToolCreateIssue, p.IssueLimit, "issue", "issue-limit")
	creation(contract.ToolCreatePullRequest, p.PRLimit, "pr", "pr-limit")
	switch {
	case !isPR:
		add(contract.ToolCreateReview, false, "the mention was made on an issue, not a pull request")
	case p.MaxWrites == 0 || p.CommentLimit == 0:
		add(contract.ToolCreateReview, false, "a review counts as a comment, and no comment may be written")
	default:
		add(contract.ToolCreateReview, true, "on %s only, event COMMENT; it counts as one comment there; at most %d inline comments, each on a line of the diff", pr, p.ReviewComments)
	}
	switch {
	case !isPR:
		add(contract.ToolPushToPullRequest, false, "the mention was made on an issue, not a pull request")
	case p.HereOnly || p.CommentOnly:
		add(contract.ToolPushToPullRequest, false, "comment-only allows comments only")
	case !p.AllowPush:
		add(contract.ToolPushToPullRequest, false, "the operator has not enabled pushes to pull request branches (allow-push)")
	case p.PRLimit == 0:
		add(contract.ToolPushToPullRequest, false, "a push counts as a pull request, and pr-limit is 0")
	default:
		add(contract.ToolPushToPullRequest, true, "onto the branch of %s only; it counts as one pull request", pr)
	}
	for _, tool := range []string{contract.ToolAddLabels, contract.ToolRemoveLabels} {
		switch {
		case p.HereOnly:
			add(tool, false, "here-only allows comments only (a label is not a comment)")
		case p.CommentOnly:
			add(tool, false, "comment-only allows comments only (a label is not a comment)")
		case p.LabelLimit == 0:
			add(tool, false, "label-limit is 0")
		default:
			add(tool, true, "on %s (or an issue in a repository repo= names), only labels the repository has, at most %d label changes in this run", here, p.LabelLimit)
		}
	}
	add(contract.ToolNoop, true, "always")
	return out
}
