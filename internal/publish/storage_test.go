package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/localfs"
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

// The agent job names a local failure in outcome.json: the error comment
// names the path and the failure, whatever the engine's text says.
func TestLocalFailureFromOutcome(t *testing.T) {
	for _, lf := range []localfs.Failure{
		{What: "the disk is full", Path: "/w/runs/1-1/events.jsonl", Op: "write", Err: "no space left on device"},
		{What: "the path is not writable (permission denied)", Path: "/w/runs/1-1/outputs.jsonl", Op: "open", Err: "permission denied"},
		{What: "the file or its directory is missing", Path: "/w/runs/1-1/outputs.jsonl", Op: "open", Err: "no such file or directory"},
	} {
		run := AgentRun{Cause: contract.CauseFailed, Status: "failed", Engine: "claude", ErrorText: "local failure …", Local: &lf}
		got := errorComments(run, &Result{}, goldenOptions())
		require.Len(t, got, 1)
		assert.Contains(t, got[0].body, HeadingStorage)
		assert.Contains(t, got[0].body, "`"+lf.Path+"`")
		assert.Contains(t, got[0].body, lf.What)
		assert.NotContains(t, got[0].body, "Runtime Error")
		o := goldenOptions()
		o.RunDir = "/w/runs/1-1"
		why := failureReason(run, &Result{Cause: contract.CauseFailed}, o)
		assert.Contains(t, why, lf.What)
		assert.Contains(t, why, lf.Path)
	}
}
