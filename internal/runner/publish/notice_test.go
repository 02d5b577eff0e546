package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
)

// The thread's no-write notice names why the run stopped, each cause in its
// own words, and never carries the engine's text (which may hold anything
// the model wrote).
func TestNoticeNamesTheCause(t *testing.T) {
	hostile := AgentRun{ErrorText: "@everyone see https://evil.example", Turns: 2}
	tests := []struct {
		name           string
		cause          string
		run            AgentRun
		nothingWritten bool
		noRecord       bool
		want           string
	}{
		{"crash", contract.CauseCrash, hostile, false, false, "engine crashed"},
		{"loop", contract.CauseLoop, hostile, false, false, "loop detected"},
		{"timeout", contract.CauseTimeout, hostile, false, false, "time limit (MR_TIMEOUT)"},
		{"max turns", contract.CauseMaxTurns, hostile, false, false, "all 2 turns it was allowed (MR_MAX_TURNS)"},
		{"budget", contract.CauseBudget, hostile, false, false, "cost budget (MR_MAX_BUDGET_USD)"},
		{"engine error", contract.CauseFailed, hostile, false, false, "engine reported an error"},
		{"nothing asked for", contract.CauseFailed, AgentRun{Status: contract.StatusCompleted}, true, false, "without asking for any write"},
		{"no record", contract.CauseFailed, AgentRun{}, false, true, "left no run record"},
		{"storage", contract.CauseFailed, AgentRun{Local: &localfs.Failure{Path: "/x"}}, false, false, "could not write its files"},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := noticeCause(tc.cause, tc.run, tc.nothingWritten, tc.noRecord)
			assert.Contains(t, got, tc.want)
			assert.NotContains(t, got, "@everyone")
			assert.NotContains(t, got, "evil")
			if other, dup := seen[got]; dup {
				t.Errorf("%s and %s read the same in the thread: %q", tc.name, other, got)
			}
			seen[got] = tc.name
		})
	}
}
