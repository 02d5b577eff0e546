package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/publish"
)

// TestLocalFailuresNamed: a full disk, a read-only or unwritable file in
// the run directory and an outputs file removed during the run end the run
// as a local failure naming the path, not as the engine's error.
func TestLocalFailuresNamed(t *testing.T) {
	tests := []struct {
		name   string
		faults []localfs.Fault
		script func(f *fixture) string
		what   string
		path   string
	}{
		{"disk full while recording events", []localfs.Fault{{Op: "write", Path: contract.EventsFile, Err: syscall.ENOSPC, After: 4}}, nil,
			"the disk is full", contract.EventsFile},
		{"quota used up writing the prompt", []localfs.Fault{{Op: "write", Path: PromptFile, Err: syscall.EDQUOT}}, nil,
			"quota", PromptFile},
		{"outputs file unwritable", []localfs.Fault{{Op: "open", Path: contract.OutputsFile, Err: syscall.EACCES}}, nil,
			"not writable", contract.OutputsFile},
		{"outputs file on a read-only file system", []localfs.Fault{{Op: "open", Path: contract.OutputsFile, Err: syscall.EROFS}}, nil,
			"read-only", contract.OutputsFile},
		{"outputs file removed during the run", nil, func(f *fixture) string {
			return `rm -f "` + filepath.Join(f.runDir(), contract.OutputsFile) + `"; ` + resultOK
		}, "missing", contract.OutputsFile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "@helperbot hi")
			f.exe = "/bin/true"
			f.fs = &localfs.Inject{Faults: tc.faults}
			script := resultOK
			if tc.script != nil {
				script = tc.script(f)
			}
			out, err := f.run(t, scriptEngine(t, script))
			require.Error(t, err)
			require.NotNil(t, out)
			assert.Equal(t, contract.StatusFailed, out.Status)
			require.NotNil(t, out.Local, "a local failure: %s", out.Error)
			assert.Contains(t, out.Local.What, tc.what)
			assert.Equal(t, tc.path, filepath.Base(out.Local.Path))
			assert.Contains(t, out.Error, "local failure on the agent job's machine")
			assert.Contains(t, out.Error, out.Local.Path)
			// outcome.json carries it to publish
			o := f.requireRecord(t)
			assert.Equal(t, out.Local, o.Local)
		})
	}
}

// TestReadOnlyRunDir: no record can be written at all; the error names
// the failure and the run directory (the job log is all that is left).
func TestReadOnlyRunDir(t *testing.T) {
	f := newFixture(t, "@helperbot hi")
	f.exe = "/bin/true"
	f.fs = &localfs.Inject{Faults: []localfs.Fault{{Op: "mkdir", Path: "logs", Err: syscall.EROFS}}}
	out, err := f.run(t, scriptEngine(t, resultOK))
	require.Error(t, err)
	assert.Nil(t, out)
	assert.Contains(t, err.Error(), "the file system is read-only")
	assert.Contains(t, err.Error(), filepath.Join(f.runDir(), "logs"))
	assert.NotContains(t, err.Error(), "Runtime Error")
}

// TestUnwrittenRecordReportedAsStorage: the agent job's machine cannot
// write outcome.json (a full disk at the end of the run, a read-only run
// directory from the start). The stage can say nothing more itself;
// publish, told by GitHub that the agent job failed after its stage had
// started, reports a storage error naming the missing files, never the
// engine's error and never a success. Without GitHub's word, or for a
// stage that never started, it infers nothing.
func TestUnwrittenRecordReportedAsStorage(t *testing.T) {
	tests := []struct {
		name    string
		faults  []localfs.Fault
		missing []string
	}{
		{"disk full when the run ends", []localfs.Fault{
			{Op: "write", Path: contract.OutcomeFile, Err: syscall.ENOSPC},
			{Op: "write", Path: contract.TranscriptFile, Err: syscall.ENOSPC},
		}, []string{contract.OutcomeFile}},
		{"outcome.json alone unwritable", []localfs.Fault{{Op: "write", Path: contract.OutcomeFile, Err: syscall.EACCES}},
			[]string{contract.OutcomeFile}},
		{"read-only run directory", []localfs.Fault{{Op: "", Path: "*", Err: syscall.EROFS}},
			[]string{contract.OutcomeFile, contract.MetaFile}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "@helperbot hi")
			f.exe = "/bin/true"
			f.fs = &localfs.Inject{Faults: tc.faults}
			require.NoError(t, os.MkdirAll(f.runDir(), 0o755)) // assemble's part of the record
			_, err := f.run(t, scriptEngine(t, resultOK))
			require.Error(t, err, "the stage fails: its record is not complete")
			require.NoFileExists(t, filepath.Join(f.runDir(), contract.OutcomeFile))

			report := func(job publish.AgentJob) publish.AgentRun {
				run := publish.LoadAgentRun(f.runDir())
				run.CrossCheck(job)
				return run
			}
			run := report(publish.AgentJob{Result: contract.AgentJobFailure, Stage: contract.AgentStageStarted})
			require.NotNil(t, run.Local)
			assert.Equal(t, contract.CauseFailed, run.Cause)
			assert.Equal(t, contract.StatusFailed, run.Status)
			assert.Equal(t, tc.missing, run.Missing)
			for _, name := range tc.missing {
				assert.Contains(t, run.Local.Path, filepath.Join(f.runDir(), name))
			}
			assert.Nil(t, report(publish.AgentJob{}).Local, "without GitHub's word nothing is inferred")
			for _, job := range []publish.AgentJob{{Result: contract.AgentJobFailure}, {Result: contract.AgentJobCancelled, Stage: contract.AgentStageStarted}} {
				run := report(job)
				assert.Nil(t, run.Local, "%+v: nothing trustworthy says the stage ran and failed", job)
				assert.NotEqual(t, contract.StatusCompleted, run.Status, "%+v: GitHub saw the job fail", job)
			}
		})
	}
}
