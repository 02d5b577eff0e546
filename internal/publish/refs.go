package publish

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/contract"
)

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
