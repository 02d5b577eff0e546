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

	EventToolStarted      = "tool.started"
	EventToolCompleted    = "tool.completed"
	EventToolFailed       = "tool.failed"
	EventToolDuplicate    = "tool.duplicate"
	EventToolOrphanResult = "tool.orphan_result"
	EventFileRead         = "file.read"
	EventFileWritten      = "file.written"
	EventFileRejected     = "file.rejected"
	// EventCheckoutCompleted: the agent stage checked the fetched code out.
	EventCheckoutCompleted  = "checkout.completed"
	EventDeliverableStarted = "deliverable.check.started"
	EventDeliverableDone    = "deliverable.check.completed"
	EventDeliverableMissing = "deliverable.missing"

	EventPolicyAllowed = "policy.allowed"
	EventPolicyDenied  = "policy.denied"
	EventPolicyInvalid = "policy.invalid"
	EventGateError     = "gate.error"
	EventEngineResult  = "engine.result"
	EventLoopDetected  = "loop.detected"

	// The agent job's start and end when assemble started the record; the
	// run's own end (run.completed/failed) is publish's.
	EventAgentStarted   = "agent.started"
	EventAgentCompleted = "agent.completed"
	EventAgentFailed    = "agent.failed"

	// assemble
	EventShardStored       = "shard.stored"
	EventShardLockAcquired = "shard.lock.acquired"
	EventShardReassembled  = "shard.reassembled"
	EventLogIssueReady     = "log_issue.ready"

	// publish: the re-check, each decision and write, the report
	EventPublishStarted  = "publish.started"
	EventPublishReported = "publish.reported"
	EventOutputNoop      = "output.noop"
	EventOutputRefused   = "output.refused"
	EventOutputWritten   = "output.written"
	EventOutputFailed    = "output.failed"

	EventRecordRecovered = "record.recovered"
	EventError           = "error"
)
