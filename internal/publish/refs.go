package publish

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/contract"

	"github.com/mention-runner/mention-runner/internal/jobstate"
)

// finishJobState marks the job done in CONTROL. Unlike the shard refs the
// state stays (until swept), so a delivery of the job after this run ends
// does not run its agent again. A failure only warns: the state says
// "running" then, which keeps duplicates out just as well.
func (p *publisher) finishJobState(ctx context.Context) {
	st, err := jobstate.New(p.o.Control, p.o.ControlRepo, p.o.Now)
	if err == nil {
		err = st.Finish(ctx, p.job.JobID, "(publish)")
	}
	if err != nil {
		p.logf("mark job %s done: %v", p.job.JobID, err)
	}
}

// deleteJobRefs removes refs/mention-runner/jobs/<jobid>/… from CONTROL
// (the shards and the lock). Failures only warn: the sweep catches them.
func (p *publisher) deleteJobRefs(ctx context.Context) {
	owner, name := splitRepo(p.o.ControlRepo)
	full := contract.JobRefs(p.job.JobID)
	prefix := strings.TrimPrefix(full, "refs/") // matching-refs takes the name without refs/
	refs, resp, err := p.o.Control.Git.ListMatchingRefs(ctx, owner, name, &github.ReferenceListOptions{Ref: prefix})
	if err != nil {
		if resp == nil || resp.StatusCode != http.StatusNotFound {
			p.logf("list job refs: %v", err)
		}
		return
	}
	for _, r := range refs {
		if !strings.HasPrefix(r.GetRef(), full) {
			continue
		}
		if resp, err := p.o.Control.Git.DeleteRef(ctx, owner, name, r.GetRef()); err != nil && (resp == nil || resp.StatusCode != http.StatusUnprocessableEntity) {
			p.logf("delete %s: %v", r.GetRef(), err)
		}
	}
}
