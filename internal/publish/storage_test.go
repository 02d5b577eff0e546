package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/contract"
)

// A full disk or a read-only run directory is reported as what it is,
// not as the engine's runtime error.
func TestStorageFailureNotEngineError(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"write runs/1/events.jsonl: no space left on device", "the disk is full"},
		{"open runs/1/transcript.md: read-only file system", "read-only file system"},
		{"write: Disk quota exceeded", "quota"},
	} {
		got := errorComments(AgentRun{Cause: contract.CauseFailed, Status: "failed", Engine: "claude", ErrorText: tc.text}, &Result{}, goldenOptions())
		require.Len(t, got, 1)
		assert.Contains(t, got[0].body, HeadingStorage)
		assert.Contains(t, got[0].body, tc.want)
		assert.NotContains(t, got[0].body, "Runtime Error")
	}
	got := errorComments(AgentRun{Cause: contract.CauseFailed, Status: "failed", Engine: "claude", ErrorText: "claude exited with status 3"}, &Result{}, goldenOptions())
	require.Len(t, got, 1)
	assert.Contains(t, got[0].body, "## Error: Claude Code Runtime Error")
}
