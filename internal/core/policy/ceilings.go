package policy

import "fmt"

// MaxLimit is the largest n a limit flag or ceiling may have.
const MaxLimit = 1000

// Ceilings are the operator's maxima; user flags can only go below them.
// MaxWrites caps all comments, issues and pull requests of a run together
// (a zero value allows no write at all: fail closed). ControlRepo is the
// control repository, which the agent may never write to ("" when the
// caller has none, as in `dispatcher explain`).
// The JSON names are the gate configuration's (the agent job hands the
// gate the same ceilings publish uses).
//
// LabelLimit caps the label changes of a run (each label added or removed
// counts one); ReviewComments caps the inline comments of one review;
// AllowPush lets push_to_pull_request commit onto a pull request's own
// branch. Their zero values refuse: no labels, reviews without inline
// comments, no pushes.
type Ceilings struct {
	CommentLimit   int    `json:"comment_limit"`
	IssueLimit     int    `json:"issue_limit"`
	PRLimit        int    `json:"pr_limit"`
	MaxWrites      int    `json:"max_writes"`
	LabelLimit     int    `json:"label_limit"`
	ReviewComments int    `json:"review_comment_limit"`
	AllowPush      bool   `json:"allow_push"`
	ControlRepo    string `json:"control_repo,omitempty"`
}

// DefaultMaxWrites is the operator's default cap on a run's writes.
const DefaultMaxWrites = 10

// DefaultLabelLimit is the operator's default cap on a run's label changes.
const DefaultLabelLimit = 5

// DefaultReviewComments is the operator's default cap on the inline
// comments of one review.
const DefaultReviewComments = 30

// DefaultCeilings: 3 comments per thread, 1 issue, 1 pull request, 10
// writes in all per run, 5 label changes, 30 inline comments per review,
// no pushes to pull request branches.
func DefaultCeilings() Ceilings {
	return Ceilings{CommentLimit: 3, IssueLimit: 1, PRLimit: 1, MaxWrites: DefaultMaxWrites,
		LabelLimit: DefaultLabelLimit, ReviewComments: DefaultReviewComments}
}

// Validate reports the first ceiling outside 0…MaxLimit.
func (c Ceilings) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"comment-limit", c.CommentLimit}, {"issue-limit", c.IssueLimit}, {"pr-limit", c.PRLimit}, {"max-writes", c.MaxWrites},
		{"label-limit", c.LabelLimit}, {"review-comment-limit", c.ReviewComments}} {
		if f.v < 0 || f.v > MaxLimit {
			return fmt.Errorf("operator ceiling %s=%d: must be 0…%d", f.name, f.v, MaxLimit)
		}
	}
	return nil
}

// clamp keeps a value inside 0…MaxLimit; both directions only tighten or
// keep a limit, so an unvalidated ceiling never widens anything.
func clamp(v int) int {
	return max(0, min(v, MaxLimit))
}
