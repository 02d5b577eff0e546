package publish

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
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

// TestCrossCheckAgainstGitHub: the agent job's files are hostile; what
// GitHub says about the job (its result, its stage output) can only make
// the report say "failed". A stage that started, failed and left no
// outcome.json is a storage error naming the missing files; a record that
// claims success for a job GitHub saw fail is not believed; a missing
// outcome with a successful job or a stage that never started infers
// nothing.
func TestCrossCheckAgainstGitHub(t *testing.T) {
	failed, started := contract.AgentJobFailure, contract.AgentStageStarted
	tests := []struct {
		name      string
		outcome   *record.Outcome // nil = no outcome.json
		meta      bool
		job       AgentJob
		status    string
		cause     string
		storage   bool
		problemRe string
	}{
		{"unwritten record", nil, false, AgentJob{failed, started}, contract.StatusFailed, contract.CauseFailed, true, ""},
		{"unwritten outcome, run.json there", nil, true, AgentJob{failed, started}, contract.StatusFailed, contract.CauseFailed, true, ""},
		{"no word from GitHub", nil, false, AgentJob{}, "", contract.CauseFailed, false, ""},
		{"stage never started", nil, false, AgentJob{failed, ""}, "", contract.CauseFailed, false, ""},
		{"stage output forged, job succeeded", nil, false, AgentJob{contract.AgentJobSuccess, started}, "", contract.CauseFailed, false, ""},
		{"cancelled", nil, false, AgentJob{contract.AgentJobCancelled, started}, "", contract.CauseFailed, false, ""},
		{"record says completed, GitHub says failure", &record.Outcome{Status: contract.StatusCompleted}, true, AgentJob{failed, started},
			contract.StatusFailed, contract.CauseFailed, false, `ended as "failure" on GitHub, but its record says completed`},
		{"record says completed, GitHub says cancelled", &record.Outcome{Status: contract.StatusCompleted}, true, AgentJob{contract.AgentJobCancelled, started},
			contract.StatusFailed, contract.CauseFailed, false, "not believed"},
		{"completed and succeeded", &record.Outcome{Status: contract.StatusCompleted}, true, AgentJob{contract.AgentJobSuccess, started},
			contract.StatusCompleted, "", false, ""},
		{"its own cause stays", &record.Outcome{Status: contract.StatusFailed, Failure: contract.CauseLoop}, true, AgentJob{failed, started},
			contract.StatusFailed, contract.CauseLoop, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.meta {
				require.NoError(t, record.WriteMeta(dir, record.RunMeta{RunID: "1-1", Engine: "claude", Status: "running"}))
			}
			if tc.outcome != nil {
				require.NoError(t, record.WriteOutcome(dir, *tc.outcome))
			}
			run := LoadAgentRun(dir)
			run.CrossCheck(tc.job)
			assert.Equal(t, tc.status, run.Status)
			assert.Equal(t, tc.cause, run.Cause)
			if tc.problemRe != "" {
				assert.Regexp(t, regexp.QuoteMeta(tc.problemRe), strings.Join(run.Problems, "\n"))
			}
			if !tc.storage {
				assert.Nil(t, run.Local)
				return
			}
			require.NotNil(t, run.Local)
			got := errorComments(run, &Result{}, goldenOptions())
			require.Len(t, got, 1)
			assert.Contains(t, got[0].body, HeadingStorage)
			assert.Contains(t, got[0].body, filepath.Join(dir, contract.OutcomeFile))
			assert.Equal(t, !tc.meta, strings.Contains(got[0].body, filepath.Join(dir, contract.MetaFile)), "names exactly what is missing")
			assert.Contains(t, got[0].body, "free space on the runner or make the run directory writable")
			assert.NotContains(t, got[0].body, "Runtime Error")
			o := goldenOptions()
			o.RunDir = dir
			assert.Contains(t, failureReason(run, &Result{Cause: contract.CauseFailed}, o), "local failure on the agent job's machine")
		})
	}
}
