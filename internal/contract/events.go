package contract

// repository_dispatch event types (SPEC §4).
const (
	EventAgentSmall = "agent_small"
	EventAgentShard = "agent_shard"
)

// Types of events.jsonl entries (SPEC §5). Every job that writes or reads
// one uses these names.
const (
	EventRunCreated   = "run.created"
	EventRunStarted   = "run.started"
	EventRunCompleted = "run.completed"
	EventRunFailed    = "run.failed"

	EventConfigLoaded     = "config.loaded"
	EventPromptRendered   = "prompt.rendered"
	EventContextSanitized = "context.sanitized"
	EventSkillIndexed     = "skill.indexed"
	EventSkillLoaded      = "skill.loaded"

	EventToolStarted        = "tool.started"
	EventToolCompleted      = "tool.completed"
	EventToolFailed         = "tool.failed"
	EventToolDuplicate      = "tool.duplicate"
	EventToolOrphanResult   = "tool.orphan_result"
	EventFileRead           = "file.read"
	EventFileWritten        = "file.written"
	EventFileRejected       = "file.rejected"
	EventDeliverableStarted = "deliverable.check.started"
	EventDeliverableDone    = "deliverable.check.completed"
	EventDeliverableMissing = "deliverable.missing"

	EventPolicyAllowed = "policy.allowed"
	EventPolicyDenied  = "policy.denied"
	EventPolicyInvalid = "policy.invalid"
	EventGateError     = "gate.error"
	EventEngineResult  = "engine.result"
	EventLoopDetected  = "loop.detected"

	EventRecordRecovered = "record.recovered"
	EventError           = "error"
)
