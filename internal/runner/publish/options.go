package publish

import (
	"context"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/clock"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// Options is everything one publish needs. The clients should come from
// ghclient.New (retries, rate limits, pacing).
type Options struct {
	Bot     *github.Client // the bot's token: writes to target repos
	Control *github.Client // writes to CONTROL (log issue, refs, blocklist); nil = Bot
	// ControlPush, with Control's token, deletes the job's refs in one
	// push; nil = one REST request a ref.
	ControlPush  *refpush.Client
	BotLogin     string
	ControlLogin string // the account Control writes as; "" = BotLogin
	ControlRepo  string // owner/name
	LogIssue     int    // from assemble; 0 = find or create this job's log issue
	// LogIssueNew: this workflow run's assemble opened LogIssue (its
	// log_issue_new output). With Attempt 1 nothing of publish is on it
	// yet and its only label is the log label: its comments are not
	// listed before posting, nor its labels read before a successful
	// update. A post whose answer is lost is still looked for before it
	// is sent again.
	LogIssueNew bool
	// Attempt is the workflow run's attempt (GITHUB_RUN_ATTEMPT); 0 = not
	// known, read as a re-run.
	Attempt int
	// Unsharded: assemble's sharded output says the context came as one
	// agent_small event, so the job has no shard refs to list and delete.
	Unsharded bool
	// ControlIDs are the control repo's ids when the environment gives
	// them (the repository the workflow runs in); zero = look them up.
	ControlIDs policy.RepoIDs

	Context        []byte // the verified trusted context (VerifyContext)
	RunDir         string // the agent's run directory; "" = no record
	NoRecordReason string // why RunDir is empty, for the report
	// AgentJob is what GitHub says about the agent job, from outside its
	// files; zero = not known (then the record alone shapes the report).
	AgentJob AgentJob

	Ceilings      policy.Ceilings
	BlocklistPath string // "" = contract.BlocklistPath
	// MaxDiffBytes caps the pull request diff publish reads again to check
	// reviews (0 = prdiff.DefaultMaxBytes); keep it equal to the fetch
	// job's, so both see the same lines.
	MaxDiffBytes int
	Git          GitOptions

	ServerURL      string // web base for links, e.g. https://github.com
	WorkflowRunURL string
	Engine         string                // shown when the record names none
	Session        render.SessionOptions // how the session is cut into comments; zero = defaults

	RetryDelay time.Duration                                    // first wait before re-checking an ambiguous write; 0 = 2s
	Sleep      func(ctx context.Context, d time.Duration) error // nil = timer honouring ctx
	Logf       func(format string, args ...any)                 // progress; nil = silent
	Now        func() time.Time                                 // nil = time.Now

	// afterWrite runs after each applied output (tests: simulate a crash).
	afterWrite func(index int) error
}

// AgentJob is the agent job as GitHub reports it to publish.
type AgentJob struct {
	Result string // needs.agent.result: success, failure, cancelled
	Stage  string // needs.agent.outputs.stage: contract.AgentStageStarted once the stage ran
}

// GitOptions configure pushing pull request branches.
type GitOptions struct {
	BaseURL              string // where repositories are served: <BaseURL>owner/name.git
	Token                string // the bot's token, sent as an HTTP header, never in a URL
	AllowPushToTarget    bool   // push to the target repo instead of the bot's fork
	AllowWorkflowChanges bool
	MaxBundleBytes       int64         // 0 = prbundle.DefaultMaxBytes
	ForkTimeout          time.Duration // how long to wait for a new fork; 0 = 2m
	ForkPoll             time.Duration // 0 = 3s
}

// Result is what publish did.
type Result struct {
	JobID    string
	LogIssue int
	Status   string // completed | failed
	Cause    string // "" or a Cause* constant (also the log issue's label)
	Reason   string // why the run failed, one line ("" when it did not)
	Problems []string
	// PublishProblems are writes that failed while publishing (a subset
	// of Problems); they get their own error comment.
	PublishProblems []string
	// NothingWritten: the agent ended well but wrote nothing and did not
	// say why (no noop), which is the run's cause.
	NothingWritten bool
	Written        []Written
	Refused        []render.Refusal
	Report         render.Report
	SessionParts   []string
	StepSummary    string
}

// Written is one applied (or found already applied) write.
type Written struct {
	Index    int // output index; -1 for the no-write notice
	Kind     policy.Kind
	Repo     string
	Number   int
	URL      string
	Existing bool   // found by its marker, not written again
	HeadRepo string // pull requests and pushes: where the branch was pushed
	SHA      string // pushes: the commit put on the branch
	// label changes: the labels added and removed (each as the repository
	// spells it), whether or not the thread already had them
	Added, Removed []string
}

func (o *Options) withDefaults() {
	if o.Control == nil {
		o.Control = o.Bot
	}
	if o.ControlLogin == "" {
		o.ControlLogin = o.BotLogin
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 2 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ServerURL == "" {
		o.ServerURL = "https://github.com"
	}
	if o.Git.ForkTimeout <= 0 {
		o.Git.ForkTimeout = 2 * time.Minute
	}
	if o.Git.ForkPoll <= 0 {
		o.Git.ForkPoll = 3 * time.Second
	}
}

func (o Options) sleep(ctx context.Context, d time.Duration) error { return o.Sleep(ctx, d) }
