package agent

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// RunID names the run directory (record.RunID).
func RunID(getenv func(string) string) (string, error) { return record.RunID(getenv) }

// continueRecord returns the run directory under runsDir the agent stage
// writes to: runID's when it exists, else the one record of the same
// workflow run that the context artifact brought (assemble's, started in
// an earlier attempt: "Re-run failed jobs" runs the agent job again with
// the next GITHUB_RUN_ATTEMPT), so the job's events stay one sequence in
// one directory, the one publish finds. Anything else keeps runID.
func continueRecord(runsDir, runID string) string {
	if st, err := os.Stat(filepath.Join(runsDir, runID)); err == nil && st.IsDir() {
		return runID
	}
	i := strings.LastIndexByte(runID, '-')
	if i <= 0 || strings.HasPrefix(runID, "local-") {
		return runID
	}
	ents, err := os.ReadDir(runsDir)
	if err != nil {
		return runID
	}
	var found []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), runID[:i+1]) {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 {
		return runID
	}
	return found[0]
}
