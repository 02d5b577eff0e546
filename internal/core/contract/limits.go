package contract

// GitHub's limits, and the runner's own limits derived from them. Each
// distinct limit has its own name.
const (
	// GitHubBodyChars is GitHub's limit on an issue, comment or pull
	// request body, in characters.
	GitHubBodyChars = 65536
	// AgentBodyChars is the longest body the gate accepts from the agent:
	// publish appends a NOTE block and a marker, which must still fit under
	// GitHubBodyChars.
	AgentBodyChars = 60000
	// AgentTitleChars is the longest issue or pull request title the gate
	// accepts (GitHub's own limit is 256).
	AgentTitleChars = 256
	// DispatchBodyBytes bounds one repository_dispatch request body (SPEC
	// §4: "under 64 KB, use 64,000 bytes").
	DispatchBodyBytes = 64000
	// ClientPayloadMaxProps is GitHub's limit on client_payload's
	// top-level properties.
	ClientPayloadMaxProps = 10
	// EventTypeMaxChars is GitHub's limit on a dispatch event_type.
	EventTypeMaxChars = 100
)

// Limits on the other fields of a queued write (the gate's tool arguments).
const (
	AgentLabels      = 10   // labels on one new issue
	AgentLabelChars  = 50   // characters of one label
	AgentReasonChars = 2000 // characters of a noop's reason
	// AgentLabelChanges bounds the labels one add_labels/remove_labels
	// call names (the operator's label-limit is usually far lower).
	AgentLabelChanges = 100
	// AgentReviewCommentsMax bounds the operator's cap on inline comments
	// in one review (review-comment-limit).
	AgentReviewCommentsMax = 1000
	// AgentPathChars bounds a review comment's path.
	AgentPathChars = 1024
)

// MaxLabelRepos is how many repositories named by repo= flags (besides
// the thread's own) the dispatcher reads the labels of, in alphabetical
// order: a label change in any other one is refused for want of them.
// Each is one read and at most a sixteenth of the context's budget.
const MaxLabelRepos = 4

// GitHub's secondary limits on content-creating requests, counted per
// account whatever token or process sends them.
const (
	ContentWritesPerMinute = 80
	ContentWritesPerHour   = 500
)

// GitHub's primary limits on REST requests an hour (git's smart HTTP is
// not counted): a user's token's, counted per account, and a workflow's
// GITHUB_TOKEN's, counted per repository across all its jobs.
const (
	RESTRequestsPerHour          = 5000
	WorkflowTokenRequestsPerHour = 1000
)
