package contract

import "strconv"

// Files of the run record (SPEC §5), relative to the run directory. The
// agent job writes them, publish reads them, and the artifact carries them.
const (
	EventsFile     = "events.jsonl"
	ToolsFile      = "logs/tools.jsonl"
	ErrorsFile     = "logs/errors.jsonl"
	GateLogFile    = "logs/gate.jsonl"
	SessionFile    = "session.json"
	OutputsFile    = "outputs.jsonl"
	MetaFile       = "run.json"
	TranscriptFile = "transcript.md"
	// OutcomeFile is how the agent stage ended, for the publish job.
	OutcomeFile = "outcome.json"
)

// Files assemble hands the agent and publish jobs, beside the context file.
const (
	ContextFile = "context.json"
	// BlocklistSnapshotFile is the opt-out list as it stood when the job
	// was assembled; the agent's gate reads it.
	BlocklistSnapshotFile = "blocklist.json"
	// RepoIDsFile holds the numeric ids (policy.IDs) of the thread's
	// repository and of every deny= entry, as resolved by assemble; the
	// gate matches the opt-out list and deny= on them.
	RepoIDsFile = "repo-ids.json"
)

// Files the prepare job's fetch step hands the agent job (the target artifact): the
// target's code at one commit as a pack, its manifest, and for a pull
// request its diff at that commit (capped; the manifest says by how much).
const (
	TargetPackFile     = "target.pack"
	TargetManifestFile = "target.json"
	TargetDiffFile     = "target.diff"
)

// BundleFile is the git bundle of the pull request queued as output
// index: the gate writes it into the run directory, publish pushes it.
func BundleFile(index int) string { return "pr-" + strconv.Itoa(index) + ".bundle" }

// Files the dispatcher and the runner share in the control repo.
const (
	// BlocklistPath is the opt-out list (SPEC §7).
	BlocklistPath = ".mention-runner/blocklist.json"
)

// RecordArtifactPrefix names the workflow artifact with the complete run
// record the publish job leaves (agent-run.yml uploads runs/ as
// RecordArtifactPrefix+jobid); the log issue names it.
const RecordArtifactPrefix = "run-record-"
