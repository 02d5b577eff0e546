package publish

import (
	"context"

	"github.com/mention-runner/mention-runner/internal/runner/shardstore"
)

// deleteJobRefs removes refs/mention-runner/jobs/<jobid>/… from CONTROL
// (the shards and the lock) with the store that wrote them: with a pusher,
// all in one request. Failures only warn: the sweep catches them.
func (p *publisher) deleteJobRefs(ctx context.Context) {
	if p.o.Unsharded {
		return // one agent_small event: the job has no shard refs
	}
	st, err := shardstore.New(p.o.Control, p.o.ControlRepo, p.o.Now)
	if err == nil {
		st.Push = p.o.ControlPush
		err = st.DeleteJob(ctx, p.job.JobID)
	}
	if err != nil {
		p.logf("delete the job's refs: %v", err)
	}
}
