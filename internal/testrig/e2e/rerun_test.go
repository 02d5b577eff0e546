package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// TestFlowRerunFailedAgent: the agent job fails, publish reports it, and
// "Re-run failed jobs" runs the agent job and publish again in the
// workflow run's next attempt. The demo's artifact store answers 409 to
// an upload of a name the run holds without overwrite, as GitHub does;
// the workflow's names and overwrite flags (read from agent-run.yml) let
// the re-run upload, and publish reads the record of the agent's last
// attempt. Nothing is written twice.
func TestFlowRerunFailedAgent(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "crash.jsonl")
	require.NoError(t, os.WriteFile(script, []byte(`{"text": "Reading the build log."}`+"\n"+
		`{"crash": "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"}`+"\n"), 0o644))
	w, f := newFlow(t, flowCase{engine: demo.EngineReplay, script: script})
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()

	err := f.Run(ctx)
	require.Error(t, err, "the agent job fails")
	require.NotErrorIs(t, err, demo.ErrArtifactExists)
	require.Len(t, f.Publishes, 1)
	assert.Contains(t, f.Publishes[0].Stderr, "the run failed (crash)", "publish reports the failure from the agent's record")
	thread := len(w.Sim.Comments(demo.TargetRepo, w.Issue))
	logComments := len(w.Sim.Comments(demo.ControlRepo, f.LogIssue))
	issues := len(w.Sim.Issues(demo.ControlRepo))
	firstRecord := f.RecordDir

	err = f.RerunFailed(ctx)
	require.NotErrorIs(t, err, demo.ErrArtifactExists, "a re-run uploads what attempt 1 uploaded")
	require.Error(t, err, "the agent fails again")
	require.Len(t, f.Publishes, 2)
	assert.Contains(t, f.Publishes[1].Stderr, "the run failed (crash)", "publish re-run reads the record of the agent's attempt 2")
	assert.NotContains(t, f.Publishes[1].Stderr, "no record")
	assert.Contains(t, f.Agent.Env, "GITHUB_RUN_ATTEMPT=2")
	assert.Contains(t, f.Publishes[1].Env, "GITHUB_RUN_ATTEMPT=2")
	assert.NotEqual(t, firstRecord, f.RecordDir, "attempt 2's record is an artifact of its own")
	assert.DirExists(t, firstRecord, "attempt 1's record stays")
	assert.FileExists(t, filepath.Join(f.RecordDir, contract.EventsFile), "the re-run agent continues the record assemble started")
	assert.FileExists(t, filepath.Join(f.FinalRecordDir, contract.EventsFile))

	assert.Len(t, w.Sim.Comments(demo.TargetRepo, w.Issue), thread, "no notice written twice on the thread")
	assert.Len(t, w.Sim.Comments(demo.ControlRepo, f.LogIssue), logComments, "no log comment written twice")
	assert.Len(t, w.Sim.Issues(demo.ControlRepo), issues, "no second log issue")
}
