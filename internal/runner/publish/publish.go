package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/identity"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

type publisher struct {
	o       Options
	job     *job.Job
	pol     policy.Policy
	polErr  error
	note    noted
	targets *markerIndex // writes on target repos, by the bot
	control *markerIndex // comments on the log issue, by ControlLogin
	res     *Result
	rec     *record.Recorder // the run record, continued; nil without one
	facts   outputs.Facts    // what reviews and label changes are checked against
	headSHA string           // the pull request head the context recorded (reviews' commit_id)
}

func (p *publisher) logf(format string, a ...any) { p.o.Logf(format, a...) }

// Run publishes one job: re-check, apply, report. The error is only for
// what leaves nothing to report on (an unusable context, an unreachable
// log issue); everything else ends up in the report and in Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.withDefaults()
	if o.RunDir == "" && o.AgentJob.Result == contract.AgentJobFailure && o.AgentJob.Stage == contract.AgentStageStarted {
		// GitHub's word (see AgentRun.CrossCheck): the stage ran and failed.
		o.NoRecordReason = cmp.Or(o.NoRecordReason, ErrNoRecord.Error()) +
			"; the agent job failed after its stage started, so its machine may not have been able to write the record (a full disk or a read-only run directory: the agent job's log has the error)"
	}
	if o.Bot == nil || o.BotLogin == "" {
		return nil, errors.New("publish: a bot client and BOT_LOGIN are required")
	}
	if !policy.ValidRepo(o.ControlRepo) {
		return nil, fmt.Errorf("publish: control repo %q is not owner/name", o.ControlRepo)
	}
	j, jerr := job.FromContext(o.Context, o.BotLogin)
	if j == nil {
		return nil, fmt.Errorf("publish: %w", jerr)
	}
	since := time.Time{}
	if !j.CreatedAt.IsZero() {
		since = j.CreatedAt.Add(-time.Minute) // writes come after the trigger; a minute of slack for clock skew
	}
	p := &publisher{o: o, job: j, targets: newMarkerIndex(since), control: newMarkerIndex(time.Time{}),
		res: &Result{JobID: j.JobID}}
	if jerr != nil {
		p.polErr = fmt.Errorf("the trusted context: %w", jerr)
	}
	store := &blockfile.Store{Client: o.Control, Repo: o.ControlRepo, Path: o.BlocklistPath}
	list, err := store.Load(ctx)
	if err != nil {
		p.polErr = errors.Join(p.polErr, fmt.Errorf("read the blocklist: %w", err))
		list = nil
	}
	p.pol = j.Policy(o.Ceilings, list)
	if list == nil {
		p.pol.Blocker = nil // avoid a typed nil in the interface
	}

	logIssue, err := p.ensureLogIssue(ctx)
	if err != nil {
		return p.res, fmt.Errorf("publish: %w", err)
	}
	p.res.LogIssue = logIssue
	if p.firstOnNewLogIssue() {
		// nothing of publish is on it yet: posting needs no listing first
		p.control.addThread(o.ControlRepo, logIssue)
	}
	p.note = noted{control: o.ControlRepo, logIssue: logIssue, bot: o.BotLogin, jobID: j.JobID}

	var run AgentRun
	var entries []outputs.Entry
	var readErr error
	if o.RunDir != "" {
		run = LoadAgentRun(o.RunDir)
		run.CrossCheck(o.AgentJob)
		entries, readErr = outputs.ReadFile(filepath.Join(o.RunDir, contract.OutputsFile))
		if errors.Is(readErr, os.ErrNotExist) {
			readErr = nil
		}
	}
	if err := p.resolveIDs(ctx, entries); err != nil {
		p.polErr = errors.Join(p.polErr, err)
	}
	if p.polErr == nil {
		p.facts = p.gatherFacts(ctx, entries)
	}
	plan := RecheckFacts(entries, readErr, p.polErr, p.pol, p.facts)
	p.res.Refused = plan.Refused
	p.openRecord()
	defer func() {
		if p.rec != nil {
			p.rec.Close() // interrupted before the record was finished
		}
	}()
	p.recordPlan(plan, len(entries))
	if err := p.applyAll(ctx, plan); err != nil {
		return p.res, err
	}
	p.outcome(ctx, run, plan)
	p.recordOutcome()
	if err := p.report(ctx, run); err != nil {
		return p.res, fmt.Errorf("publish: %w", err)
	}
	return p.res, nil
}

// resolveIDs asks GitHub for the ids of every repository the run may
// write to and of every deny= entry, so the opt-out list and deny= match a
// repository under any of its names (GitHub redirects an old name to the
// renamed repository, and the write would land there). A lookup that fails
// (other than "not found") leaves the policy unusable: nothing is written.
func (p *publisher) resolveIDs(ctx context.Context, entries []outputs.Entry) error {
	if p.polErr != nil {
		return nil
	}
	names := append([]string{p.job.Repo}, p.pol.DenyRepos...)
	for _, e := range entries {
		if e.Kind != outputs.KindNoop && !strings.EqualFold(e.Repo, p.o.ControlRepo) {
			names = append(names, e.Repo)
		}
	}
	ids, err := (&identity.Resolver{Client: p.o.Bot}).Repos(ctx, names)
	if err != nil {
		return fmt.Errorf("resolve repository ids: %w", err)
	}
	// The control repository is read with its own identity, as every other
	// read of it is (the bot may not even see it), unless the environment
	// gave its ids.
	ctl := p.o.ControlIDs
	if ctl.Repo <= 0 || ctl.Owner <= 0 {
		if ctl, err = (&identity.Resolver{Client: p.o.Control}).Repo(ctx, p.o.ControlRepo); err != nil {
			return fmt.Errorf("resolve repository ids: %w", err)
		}
	}
	ids.Set(p.o.ControlRepo, ctl)
	p.pol.IDs = ids
	return nil
}

// firstOnNewLogIssue: this is the first attempt of the workflow run whose
// assemble opened the log issue, so publish has written nothing on it and
// its labels are the ones it was opened with.
func (p *publisher) firstOnNewLogIssue() bool {
	return p.o.Attempt == 1 && p.o.LogIssueNew && p.o.LogIssue > 0
}

// applyAll applies the planned writes in order. A write that fails is
// reported and the others still go out.
func (p *publisher) applyAll(ctx context.Context, plan Plan) error {
	for _, e := range plan.Writes {
		ws, refused, err := p.apply(ctx, e)
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("publish: interrupted at output %d: %w", e.Index, ctx.Err())
		case err != nil:
			p.res.Problems = append(p.res.Problems, err.Error())
			p.res.PublishProblems = append(p.res.PublishProblems, err.Error())
			p.logf("%v", err)
			p.event(contract.EventOutputFailed, record.SeverityError, fmt.Sprintf("output %d failed: %s", e.Index, oneLine(err.Error())),
				map[string]any{"index": e.Index, "kind": e.Kind, "repo": e.Repo, "error": err.Error()})
		case refused != nil:
			p.res.Refused = append(p.res.Refused, *refused)
			p.logf("output %d refused: %s", e.Index, refused.Reason)
			p.refusedEvent(*refused)
		default:
			p.res.Written = append(p.res.Written, ws...)
			for _, w := range ws {
				p.writtenEvent(w)
				p.logf("output %d: %s (%s)", w.Index, w.URL, map[bool]string{true: "already there", false: "written"}[w.Existing])
			}
		}
		if p.o.afterWrite != nil {
			if err := p.o.afterWrite(e.Index); err != nil {
				return err
			}
		}
	}
	return nil
}

// outcome decides the run's status and cause, and posts the no-write
// notice when the agent neither wrote anything nor said why not.
func (p *publisher) outcome(ctx context.Context, run AgentRun, plan Plan) {
	cause := ""
	switch {
	case p.o.RunDir == "":
		cause = contract.CauseFailed
		reason := p.o.NoRecordReason
		if reason == "" {
			reason = ErrNoRecord.Error()
		}
		p.res.Problems = append([]string{"agent produced no record: " + reason}, p.res.Problems...)
	case run.Cause != "":
		cause = run.Cause
	}
	written := 0
	for _, w := range p.res.Written {
		if w.Index >= 0 {
			written++
		}
	}
	if len(p.res.Problems) > 0 && cause == "" {
		cause = contract.CauseFailed
	}
	if written == 0 && len(plan.Noops) == 0 {
		refused := 0
		if cause == "" {
			// only then is it the cause: a run that already failed says why itself
			cause = contract.CauseFailed
			if refused = len(p.res.Refused); refused > 0 {
				p.res.Problems = append(p.res.Problems, everyWriteRefused(refused))
			} else {
				p.res.NothingWritten = true
				p.res.Problems = append(p.res.Problems, nothingWritten)
			}
		}
		why := noticeCause(cause, run, p.res.NothingWritten, refused, p.o.RunDir == "")
		if moved(p.res.Refused) {
			// the one refusal a person fixes by asking again
			why = "the pull request's branch moved after the mention, so the commit was not pushed; mention the bot again to have the change made on the branch as it is now"
		}
		if err := p.notice(ctx, why); err != nil {
			p.res.Problems = append(p.res.Problems, err.Error())
			p.res.PublishProblems = append(p.res.PublishProblems, err.Error())
		}
	}
	p.res.Cause = cause
	p.res.Reason = failureReason(run, p.res, p.o)
	p.res.Status = "completed"
	if cause != "" {
		p.res.Status = "failed"
	}
}

const nothingWritten = "nothing was written and the agent did not say why (no noop)"

// everyWriteRefused is the problem of a run whose every queued write (n)
// publish refused on its re-check.
func everyWriteRefused(n int) string {
	if n == 1 {
		return "nothing was written: publish refused the one write the agent asked for when it checked it again"
	}
	return fmt.Sprintf("nothing was written: publish refused each of the %d writes the agent asked for when it checked them again", n)
}

// sessionOf is the session to post; without a record it says so.
func sessionOf(run AgentRun) session.Session {
	if run.Session != nil {
		return *run.Session
	}
	return session.Session{}
}

// statusText is the log issue's Status line.
func statusText(status, cause string) string {
	if cause == "" || cause == status {
		return status
	}
	return status + " (" + cause + ")"
}
