package publish

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		refused        int
		noRecord       bool
		want           string
	}{
		{"crash", contract.CauseCrash, hostile, false, 0, false, "engine crashed"},
		{"loop", contract.CauseLoop, hostile, false, 0, false, "loop detected"},
		{"timeout", contract.CauseTimeout, hostile, false, 0, false, "time limit (MR_TIMEOUT)"},
		{"max turns", contract.CauseMaxTurns, hostile, false, 0, false, "all 2 turns it was allowed (MR_MAX_TURNS)"},
		{"budget", contract.CauseBudget, hostile, false, 0, false, "cost budget (MR_MAX_BUDGET_USD)"},
		{"engine error", contract.CauseFailed, hostile, false, 0, false, "engine reported an error"},
		{"nothing asked for", contract.CauseFailed, AgentRun{Status: contract.StatusCompleted}, true, 0, false, "without asking for any write"},
		{"one write refused", contract.CauseFailed, AgentRun{Status: contract.StatusCompleted}, false, 1, false, "the one write the agent asked for was refused"},
		{"every write refused", contract.CauseFailed, AgentRun{Status: contract.StatusCompleted}, false, 3, false, "each of the 3 writes the agent asked for was refused"},
		{"no record", contract.CauseFailed, AgentRun{}, false, 0, true, "left no run record"},
		{"storage", contract.CauseFailed, AgentRun{Local: &localfs.Failure{Path: "/x"}}, false, 0, false, "could not write its files"},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := noticeCause(tc.cause, tc.run, tc.nothingWritten, tc.refused, tc.noRecord)
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

// TestNoticeWhenEveryWriteRefused: a run whose every queued write publish
// refuses on its re-check fails, and the thread's notice says the writes
// were refused, not that the agent asked for none.
func TestNoticeWhenEveryWriteRefused(t *testing.T) {
	tests := []struct {
		name   string
		writes int
		want   string
	}{
		{"one", 1, "the one write the agent asked for was refused"},
		{"two", 2, "each of the 2 writes the agent asked for was refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "here-only")
			for i := range tc.writes {
				f.add(f.comment(testOther, 1, fmt.Sprintf("elsewhere %d", i)))
			}
			res := f.run(f.options())
			assert.Equal(t, "failed", res.Status)
			assert.False(t, res.NothingWritten)
			require.Len(t, res.Refused, tc.writes)
			cs := f.botComments(testTarget, f.issue)
			require.Len(t, cs, 1, "the notice")
			assert.Contains(t, cs[0].GetBody(), tc.want)
			assert.NotContains(t, cs[0].GetBody(), "without asking")
			assert.Empty(t, f.botComments(testOther, 1))
		})
	}
}
