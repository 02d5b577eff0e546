package assemble

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	ghid "github.com/mention-runner/mention-runner/internal/core/identity"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// sinceSlack allows for clock skew between the dispatcher and GitHub when
// listing log issues updated since the job's timestamp.
const sinceSlack = time.Hour

// proceed validates the whole context, writes it for the next jobs and
// opens (or finds) the run-log issue.
func (r *run) proceed(ctx context.Context, res *Result, context []byte) error {
	j, err := job.FromContext(context, r.cfg.BotLogin)
	if err != nil {
		return &inputError{err: fmt.Errorf("the context does not describe a job: %w", err)}
	}
	if j.JobID != res.JobID {
		r.log.Warningf("job %s: the trigger comment's node id gives job id %s", res.JobID, j.JobID)
	}
	res.TargetRepo, res.TargetNumber = j.Repo, j.Number
	// At most one workflow run starts a job's agent, however often its
	// events are delivered (before, during or after that run). Whether
	// this one may is asked together with the reads it needs then (the
	// opt-out list, the repositories' ids, an existing log issue); old job
	// states are swept beside them.
	id := res.JobID
	if id == "" {
		id = j.JobID
	}
	r.sweepStates(ctx, id)
	var (
		b        jobstate.Begin
		found    *github.Issue
		snapshot *blocklist.List
	)
	var g errgroup.Group
	g.Go(func() (err error) {
		m := r.state
		if m.Commit == "" {
			if m, err = r.states.Prepare(ctx, r.holder.RunID); err != nil {
				return err
			}
		}
		b, err = r.states.BeginAt(ctx, id, r.holder.RunID, m)
		return err
	})
	var loadErr, findErr, idsErr error
	var ids policy.IDs
	g.Go(func() error { snapshot, loadErr = r.blocks.Load(ctx); return nil })
	g.Go(func() error { ids, idsErr = r.resolveIDs(ctx, j); return nil })
	searchLate := r.fresh(res)
	if !searchLate {
		g.Go(func() error { found, findErr = r.issues.find(ctx, res.JobID, r.since()); return nil })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if searchLate && b.Proceed && !b.Created {
		// Not the run that made the job's state: its log issue may exist.
		found, findErr = r.issues.find(ctx, res.JobID, r.since())
	}
	if from := r.rerunFrom(b); found == nil && findErr == nil && !from.IsZero() {
		// The listing reads the newest first and stops after a few pages:
		// a re-run long after its run began looks from that start.
		found, findErr = r.issues.findFrom(ctx, res.JobID, from)
	}
	if b.Proceed && found != nil && contract.LogIssueFinal(found.GetBody(), res.JobID) {
		// Publish finished the job (the log issue's final marker is its
		// done state): a re-run of the run that ran it, or a delivery
		// after its state was swept.
		b = jobstate.Begin{Holder: b.Holder, Status: jobstate.Done, Since: found.GetUpdatedAt().Time}
	}
	if !b.Proceed {
		res.AlreadyRun = &b
		r.log.Infof("job %s was already started by %s (state %s since %s): this delivery is a duplicate and ends here",
			id, b.Holder, b.Status, b.Since.Format(time.RFC3339))
		return nil
	}
	if b.Rerun {
		r.log.Infof("job %s: this workflow run started it before (a re-run), proceeding", id)
	}
	if loadErr != nil {
		return fmt.Errorf("snapshot the opt-out list: %w", loadErr)
	}
	if findErr != nil {
		return findErr
	}
	sum, err := writeContext(r.cfg.ContextFile, context)
	if err != nil {
		return err
	}
	res.ContextFile, res.ContextSHA256 = r.cfg.ContextFile, sum
	r.log.Infof("job %s: wrote %s (%d bytes, sha256 %s) for %s#%d", res.JobID, r.cfg.ContextFile, len(context), sum, j.Repo, j.Number)
	if err := r.snapshotBlocklist(snapshot); err != nil {
		return err
	}
	r.writeIDs(ids, idsErr)

	is := found
	if is != nil {
		r.log.Infof("job %s: found the run-log issue %s#%d (re-run)", res.JobID, r.cfg.ControlRepo, is.GetNumber())
	} else {
		body := logIssueBody(r.report(j, "running"), res.JobID)
		title := render.LogIssueTitle(j.Thread().String(), j.Author, res.JobID)
		if is, err = r.issues.create(ctx, res.JobID, title, body, r.since(), []string{contract.LogLabel}); err != nil {
			return err
		}
		res.LogIssueNew = true
		r.log.Infof("job %s: opened the run-log issue %s#%d", res.JobID, r.cfg.ControlRepo, is.GetNumber())
	}
	res.LogIssue = is.GetNumber()
	res.Ready = true
	return nil
}

// fresh: the first attempt of a workflow run of an agent_small event. If
// this run then makes the job's state, it opens the log issue without
// looking for one: only the holder of the state opens the job's issue. A
// run that failed before holding it records its failure on an issue with
// the job's marker too; for one event that takes an earlier delivery of
// the job failing at its very start (then this run opens its own issue
// beside that one). A sharded job looks first: its other shards' runs
// record their failures so.
func (r *run) fresh(res *Result) bool {
	return res.EventType == contract.EventAgentSmall && r.holder.Attempt == "1"
}

// rerunFrom is when the job began, for a re-run of a workflow run (zero
// for a first attempt): from its state, or, when the state was swept
// meanwhile (it then reads as this run's new one), from the dispatch.
func (r *run) rerunFrom(b jobstate.Begin) time.Time {
	switch {
	case b.Rerun:
		return b.Since
	case r.holder.Attempt != "" && r.holder.Attempt != "1":
		return r.earlier
	}
	return time.Time{}
}

// since is when the job's log issue was last updated at the earliest: not
// before the job was dispatched (zero = unknown, list everything).
func (r *run) since() time.Time {
	if r.earlier.IsZero() {
		return time.Time{}
	}
	return r.earlier.Add(-sinceSlack)
}

// report is the log issue's metadata as far as assemble knows it.
func (r *run) report(j *job.Job, status string) render.Report {
	rep := render.Report{WorkflowRunURL: r.runURL, ServerURL: r.cfg.ServerURL, Engine: r.cfg.Engine, Model: r.cfg.Model, Status: status}
	if j == nil {
		return rep
	}
	kind := "issues"
	if j.IsPR {
		kind = "pull"
	}
	rep.Target = j.Thread().String()
	if strings.HasPrefix(r.cfg.ServerURL, "https://") {
		rep.TargetURL = fmt.Sprintf("%s/%s/%s/%d", r.cfg.ServerURL, j.Repo, kind, j.Number)
	}
	rep.TriggerAuthor, rep.TriggerURL = j.Author, j.TriggerURL
	p := j.Policy(r.cfg.Ceilings(), nil)
	rep.PolicyWords = p.Flags()
	return rep
}

// writeContext writes the context atomically and returns its SHA-256.
func writeContext(path string, data []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("write context: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".context-*.json")
	if err != nil {
		return "", fmt.Errorf("write context: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write context %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write context %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write context %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// recordFailure puts the error on the job's log issue: a comment on the
// existing one, or a new issue labelled failed. With no job id, a new
// issue says so in its title.
func (r *run) recordFailure(ctx context.Context, res *Result, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	r.log.Errorf("%v", cause)
	section := errorSection(cause)
	if res.JobID != "" {
		is, err := r.issues.find(ctx, res.JobID, r.since())
		if err != nil {
			return err
		}
		if is != nil {
			res.LogIssue = is.GetNumber()
			return r.issues.comment(ctx, is.GetNumber(), section)
		}
	}
	title := "mention-runner: assemble failed for an event with an unknown job id"
	if res.JobID != "" {
		title = "mention-runner: assemble failed for job " + res.JobID
	}
	body := failureBody(r.report(nil, "failed"), section, res.JobID)
	is, err := r.issues.create(ctx, res.JobID, title, body, r.since(), []string{contract.LogLabel, contract.CauseFailed})
	if err != nil {
		return err
	}
	res.LogIssue = is.GetNumber()
	r.log.Infof("recorded the failure on %s#%d", r.cfg.ControlRepo, is.GetNumber())
	return nil
}

// logIssueBody is a new run-log issue: metadata, empty tracking lists and
// the job's marker.
func logIssueBody(rep render.Report, jobID string) string {
	return render.LogIssueBody(rep) + "\n" + contract.LogIssueMarker(jobID) + "\n"
}

// failureBody is the log issue of a job that failed in assemble; with no
// job id it has no marker, so nothing will ever take it for a job's issue.
func failureBody(rep render.Report, section, jobID string) string {
	body := render.LogIssueBody(rep) + "\n" + section
	if jobID != "" {
		body += "\n" + contract.LogIssueMarker(jobID) + "\n"
	}
	return body
}

// resolveIDs looks up the ids of every deny= entry for the agent's gate,
// so a deny= naming a repository's old name (GitHub redirects it) still
// denies it. The thread's own repository is not looked up: the context
// carries its ids (agent.LoadRepoIDs), and the workflow token this job
// holds cannot read a private target anyway. A lookup that fails only
// weakens the gate's early answer: publish resolves every id again before
// writing and refuses everything when it cannot.
func (r *run) resolveIDs(ctx context.Context, j *job.Job) (policy.IDs, error) {
	if len(j.Flags.DenyRepos) == 0 {
		return policy.IDs{}, nil
	}
	return (&ghid.Resolver{Client: r.blocks.Client}).Repos(ctx, j.Flags.DenyRepos)
}

// writeIDs writes what resolveIDs found for the agent job.
func (r *run) writeIDs(ids policy.IDs, err error) {
	if err != nil {
		r.log.Warningf("repository ids (the gate matches deny= and opt-outs by name where they are missing): %v", err)
	}
	path := filepath.Join(filepath.Dir(r.cfg.ContextFile), contract.RepoIDsFile)
	if err := record.WriteJSON(path, ids); err != nil {
		r.log.Warningf("repository ids: %v", err)
	}
}

// snapshotBlocklist writes the opt-out list, as read for this job, for
// the agent job.
func (r *run) snapshotBlocklist(l *blocklist.List) error {
	path := filepath.Join(filepath.Dir(r.cfg.ContextFile), contract.BlocklistSnapshotFile)
	if err := record.WriteJSON(path, l); err != nil {
		return fmt.Errorf("snapshot the opt-out list: %w", err)
	}
	r.log.Infof("opt-out list: %d entries, snapshot in %s", len(l.Entries), path)
	return nil
}
