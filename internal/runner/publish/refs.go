package publish

import (
	"context"

	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
	"github.com/mention-runner/mention-runner/internal/runner/shardstore"
)

// finishJobState marks the job done in CONTROL. Unlike the shard refs the
// state stays (until swept), so a delivery of the job after this run ends
// does not run its agent again. A failure only warns: the state says
// "running" then, which keeps duplicates out just as well.
func (p *publisher) finishJobState(ctx context.Context) {
	st, err := jobstate.New(p.o.Control, p.o.ControlRepo, p.o.Now)
	if err == nil {
		err = st.Finish(ctx, p.job.JobID)
	}
	if err != nil {
		p.logf("mark job %s done: %v", p.job.JobID, err)
	}
}

// deleteJobRefs removes refs/mention-runner/jobs/<jobid>/… from CONTROL
// (the shards and the lock) with the store that wrote them. Failures only
// warn: the sweep catches them.
func (p *publisher) deleteJobRefs(ctx context.Context) {
	st, err := shardstore.New(p.o.Control, p.o.ControlRepo, p.o.Now)
	if err == nil {
		err = st.DeleteJob(ctx, p.job.JobID)
	}
	if err != nil {
		p.logf("delete the job's refs: %v", err)
	}
}
