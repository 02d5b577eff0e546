package publish

import (
	"path/filepath"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// maxPlannedBlock caps the first grant a publish job asks for; more
// writes take further grants.
const maxPlannedBlock = 8

// PlannedWrites is how many of the bot's writes a publish of runDir
// expects: one per queued output (one per label removed), and the
// closing reaction unless a comment or review is queued (an answer on the
// thread takes its place; see react); a run that queued nothing writes a
// notice instead.
// A publish job sizes its write-budget grant by it, so that it uses every
// slot it takes and has none to give back (giving back is a ledger
// update: two writes of the control repo's identity). Unreadable outputs
// plan the default grant. botWritesControl: the bot's token also writes
// CONTROL (no workflow or control token), so the log issue's session
// comment and final update are its writes too.
func PlannedWrites(runDir string, botWritesControl bool) int {
	extra := 0
	if botWritesControl {
		extra = controlWrites
	}
	return min(plannedTargetWrites(runDir)+extra, maxPlannedBlock)
}

// controlWrites are publish's writes in CONTROL for a run whose session
// fits one comment: the session comment and the log issue's final update
// (its body ends with the job's done marker; a failure's label goes in it).
const controlWrites = 2

// plannedTargetWrites is PlannedWrites without CONTROL's writes.
func plannedTargetWrites(runDir string) int {
	entries, err := outputs.ReadFile(filepath.Join(runDir, contract.OutputsFile))
	if err != nil {
		return maxPlannedBlock
	}
	n, react := 0, 1
	for _, e := range entries {
		if e.Kind == policy.KindComment || e.Kind == policy.KindReview {
			react = 0
		}
		switch {
		case e.Kind == outputs.KindNoop:
		case e.Kind == policy.KindPush:
			n += 3 // tree, commit, ref (text files go inline in the tree)
		case e.Kind == policy.KindLabels && e.Remove:
			n += max(1, len(e.Labels))
		default:
			n++
		}
	}
	if n == 0 {
		return 2 // the no-write notice and its reaction
	}
	return n + react
}
