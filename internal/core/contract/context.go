package contract

// Top-level keys of the context object (SPEC §4): GitHub API responses
// keyed by what they are, plus the truncation record.
const (
	KeyRepository     = "repository"
	KeyIssue          = "issue"
	KeyPullRequest    = "pull_request"
	KeyComments       = "comments"
	KeyReviews        = "reviews"
	KeyReviewComments = "review_comments"
	// KeyLabels is the thread repository's labels (GET
	// /repos/{o}/{r}/labels, first page): what add_labels may add.
	KeyLabels = "labels"
	// KeyRepoLabels is the labels of the further repositories repo= flags
	// name (lower-case owner/name → the first page of their labels): what
	// add_labels may add on an issue there.
	KeyRepoLabels     = "repo_labels"
	KeyDiff           = "diff"
	KeyTriggerComment = "trigger_comment"
	KeyTruncation     = "truncation"
)

// ContextKeys lists every top-level key a context may have.
var ContextKeys = []string{KeyRepository, KeyIssue, KeyPullRequest, KeyComments, KeyReviews,
	KeyReviewComments, KeyLabels, KeyRepoLabels, KeyDiff, KeyTriggerComment, KeyTruncation}
