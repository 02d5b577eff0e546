package contract

// Run statuses: how a run ended.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Failure causes: why a run failed ("" when it completed). Each is also the
// label publish leaves on the run-log issue.
const (
	CauseFailed   = "failed"        // the engine reported an error, or the run could not start
	CauseTimeout  = "timeout"       // the wall-clock limit passed
	CauseMaxTurns = "max-turns"     // the engine hit its turn limit
	CauseLoop     = "loop-detected" // N identical consecutive tool calls
	CauseCrash    = "crash"         // the engine died: non-zero exit, signal, or no result
	CauseBudget   = "budget"        // the engine spent the run's cost budget
)

// CauseLabels lists every label a failed run can leave on its log issue,
// so a later successful publish can clear them.
var CauseLabels = []string{CauseFailed, CauseLoop, CauseTimeout, CauseMaxTurns, CauseCrash, CauseBudget}

// LogLabel marks every run-log issue.
const LogLabel = "mention-runner"

// The agent step's "stage" output is set to AgentStageStarted as soon as
// its settings are read, before it writes anything else: a local failure
// that later keeps it from writing its record (a full disk, a read-only
// run directory) still leaves this, and the agent job's result, which
// GitHub reports to publish from outside the job's files.
const (
	AgentStageOutput  = "stage"
	AgentStageStarted = "started"
)

// The agent job's result as GitHub reports it to publish
// (needs.agent.result).
const (
	AgentJobSuccess   = "success"
	AgentJobFailure   = "failure"
	AgentJobCancelled = "cancelled"
)
