package assemble

import (
	"fmt"
	"path/filepath"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

// writeRecord starts the run record (SPEC §5) with what this run did. It
// goes beside the context file (runs/<run-id>/ in the workflow), into the
// artifact the agent job downloads to its run dir; the agent and publish
// jobs append to the same events.jsonl, so one sequence runs across the
// three jobs.
func (r *run) writeRecord(res *Result) error {
	runID, err := record.RunID(r.o.Getenv)
	if err != nil {
		return err
	}
	dir := filepath.Join(filepath.Dir(r.cfg.ContextFile), runID)
	rec, err := record.Open(dir, record.Meta{RunID: runID, SessionID: record.SessionID(res.JobID, runID), TaskID: res.JobID}, r.now)
	if err != nil {
		return err
	}
	emit := func(typ, summary string, data map[string]any) {
		if err == nil {
			_, err = rec.Emit(typ, "assemble", record.SeverityInfo, summary, data)
		}
	}
	how := "one agent_small event"
	if res.Shard != nil {
		how = fmt.Sprintf("%d agent_shard events", res.Shard.Total)
	}
	emit(contract.EventRunCreated, fmt.Sprintf("job %s received as %s", res.JobID, how),
		map[string]any{"jobid": res.JobID, "event_type": res.EventType, "workflow_run_url": r.runURL, "target": fmt.Sprintf("%s#%d", res.TargetRepo, res.TargetNumber)})
	if s := res.Shard; s != nil {
		emit(contract.EventShardStored, fmt.Sprintf("shard %d of %d stored", s.Index+1, s.Total),
			map[string]any{"index": s.Index, "total": s.Total, "ref": contract.ShardRef(res.JobID, s.Index)})
		emit(contract.EventShardLockAcquired, "all shards stored; this run holds the job's lock and proceeds",
			map[string]any{"total": s.Total, "holder": r.holder.String()})
		emit(contract.EventShardReassembled, fmt.Sprintf("context reassembled from %d shards", s.Total), map[string]any{"total": s.Total})
	}
	emit(contract.EventFileWritten, "context written for the agent and publish jobs",
		map[string]any{"path": filepath.Base(res.ContextFile), "sha256": res.ContextSHA256})
	emit(contract.EventLogIssueReady, fmt.Sprintf("run-log issue %s#%d", r.cfg.ControlRepo, res.LogIssue),
		map[string]any{"control_repo": r.cfg.ControlRepo, "number": res.LogIssue})
	if cerr := rec.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("start the run record: %w", err)
	}
	r.log.Infof("job %s: run record started in %s", res.JobID, dir)
	return nil
}
