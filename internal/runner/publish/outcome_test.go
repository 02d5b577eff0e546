package publish

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/loopdetect"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// The agent stage writes its ending to outcome.json; publish must read the
// cause, the original error text and the loop from there.
func TestLoadAgentRunReadsOutcome(t *testing.T) {
	cases := []struct {
		name  string
		o     record.Outcome
		cause string
	}{
		{"completed", record.Outcome{Status: contract.StatusCompleted, Turns: 3}, ""},
		{"crash", record.Outcome{Status: contract.StatusFailed, Failure: contract.CauseCrash, Error: "claude exited 3: boom"}, contract.CauseCrash},
		{"timeout", record.Outcome{Status: contract.StatusFailed, Failure: contract.CauseTimeout}, contract.CauseTimeout},
		{"max turns", record.Outcome{Status: contract.StatusFailed, Failure: contract.CauseMaxTurns}, contract.CauseMaxTurns},
		{"loop", record.Outcome{Status: contract.StatusFailed, Failure: contract.CauseLoop,
			Loop: &loopdetect.Loop{Tool: "Glob", Args: `{"pattern":"*"}`, Count: 6}}, contract.CauseLoop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, record.WriteOutcome(dir, c.o))
			a := LoadAgentRun(dir)
			assert.Equal(t, c.cause, a.Cause)
			assert.Equal(t, c.o.Status, a.Status)
			assert.Equal(t, c.o.Error, a.ErrorText)
			if c.o.Loop != nil {
				require.Len(t, a.Loop, 1)
				assert.Equal(t, "Glob", a.Loop[0].Tool)
				assert.Equal(t, 6, a.Loop[0].Count)
			}
		})
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, contract.OutcomeFile), []byte("{torn"), 0o644))
	a := LoadAgentRun(dir)
	assert.Equal(t, contract.CauseFailed, a.Cause, "an unreadable outcome never reads as success")
	assert.NotEmpty(t, a.Problems)
	assert.Equal(t, contract.OutcomeFile, contract.OutcomeFile)
}
