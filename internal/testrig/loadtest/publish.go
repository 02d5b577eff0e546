package loadtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/publish"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// QueuedComments is how many comments each job's agent queues on its thread.
const QueuedComments = 2

// With WriteRunAll each job's agent also adds AddedLabel to its thread and
// removes TriageLabel (which the thread has), and on a pull request queues
// one review with an inline comment on its diff.
const (
	AddedLabel  = "bug"
	TriageLabel = "needs-triage"
)

// WriteRun writes the run directory the agent job would leave: a completed
// run.json and outcome.json and QueuedComments comments on the thread in
// outputs.jsonl.
func WriteRun(dir string, m Mention, at time.Time) error { return writeRun(dir, m, at, false) }

// WriteRunAll is WriteRun whose agent also changes labels and, on a pull
// request, reviews it: what make prove's fault rows publish.
func WriteRunAll(dir string, m Mention, at time.Time) error { return writeRun(dir, m, at, true) }

func writeRun(dir string, m Mention, at time.Time, all bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	id := filepath.Base(dir)
	if err := record.WriteMeta(dir, record.RunMeta{RunID: id, Engine: "replay", Status: contract.StatusCompleted}); err != nil {
		return err
	}
	if err := record.WriteOutcome(dir, record.Outcome{RunID: id, Engine: "replay", Status: contract.StatusCompleted, Turns: 1}); err != nil {
		return err
	}
	q, err := outputs.OpenQueue(filepath.Join(dir, contract.OutputsFile))
	if err != nil {
		return err
	}
	for i := 0; i < QueuedComments; i++ {
		e := outputs.Entry{Kind: policy.KindComment, Repo: m.Repo, Number: m.Number, At: at,
			Body: fmt.Sprintf("answer %d for job %s", i, m.JobID)}
		if _, err := q.Append(e); err != nil {
			return err
		}
	}
	if !all {
		return nil
	}
	more := []outputs.Entry{
		{Kind: policy.KindLabels, Repo: m.Repo, Number: m.Number, At: at, Labels: []string{AddedLabel}},
		{Kind: policy.KindLabels, Repo: m.Repo, Number: m.Number, At: at, Labels: []string{TriageLabel}, Remove: true},
	}
	if m.IsPR {
		more = append(more, outputs.Entry{Kind: policy.KindReview, Repo: m.Repo, Number: m.Number, At: at,
			Body: "review for job " + m.JobID, Comments: []outputs.ReviewComment{{Path: m.DiffPath, Line: 1, Body: "this line"}}})
	}
	for _, e := range more {
		if _, err := q.Append(e); err != nil {
			return err
		}
	}
	return nil
}

// PublishStats says how publishing went.
type PublishStats struct {
	Attempts int // publish runs, re-runs included
	Reruns   int
}

// PublishJob runs the publish stage for one job until it succeeds, as an
// operator re-runs a failed job (at most attempts times). Each run has its
// own clients and pacer, as each workflow run is its own process.
func (w *World) PublishJob(ctx context.Context, contextJSON []byte, runDir string, attempts int, st *PublishStats) (*publish.Result, error) {
	return w.PublishJobTo(ctx, contextJSON, runDir, nil, attempts, st)
}

// PublishJobTo is PublishJob in the workflow run whose assemble job ran
// as from (nil = publish finds or opens the log issue): on the log issue
// it opened, with its outputs, from the attempt it proceeded in on.
func (w *World) PublishJobTo(ctx context.Context, contextJSON []byte, runDir string, from *AssembleRun, attempts int, st *PublishStats) (*publish.Result, error) {
	var last error
	ids, err := w.ControlIDs()
	if err != nil {
		return nil, err
	}
	for a := 0; a < attempts; a++ {
		st.Attempts++
		if a > 0 {
			st.Reruns++
		}
		pacer, ledger, err := w.ProcessPacer(RunnerToken, func(o *writebudget.Options) {
			o.Block = publish.PlannedWrites(runDir, !w.PublishControl) // as cmd/runner publish
		})
		if err != nil {
			return nil, err
		}
		bot, err := ghclient.New(ghclient.Options{BaseURL: w.Base, Token: BotToken, Pacer: pacer, MaxWait: ghclient.AccountLimitWait,
			Sleep: w.Clock.Sleep, Now: w.Clock.Now, RequestTimeout: 20 * time.Second, Base: w.rt})
		if err != nil {
			return nil, err
		}
		var ctl *github.Client // nil: the bot's token writes CONTROL too
		ctlLogin := ""
		if w.PublishControl {
			// as cmd/runner publish: the workflow's token writes the log
			// issue and job refs, under its own pacer
			if ctl, err = ghclient.New(ghclient.Options{BaseURL: w.Base, Token: RunnerToken, Pacer: w.Pacer(), MaxWait: ghclient.AccountLimitWait,
				Sleep: w.Clock.Sleep, Now: w.Clock.Now, RequestTimeout: 20 * time.Second, Base: w.rt}); err != nil {
				return nil, err
			}
			ctlLogin = RunnerLogin
		}
		// as cmd/runner publish: the job's refs go in one push, with the
		// token that writes CONTROL
		pushWith, pushToken := bot, BotToken
		if ctl != nil {
			pushWith, pushToken = ctl, RunnerToken
		}
		ctlPush, err := refpush.New(pushWith.Client(), w.ServerURL(), pushToken)
		if err != nil {
			return nil, err
		}
		o := publish.Options{
			Bot: bot, BotLogin: Bot, Control: ctl, ControlLogin: ctlLogin, ControlPush: ctlPush, ControlRepo: Control, Context: contextJSON, RunDir: runDir,
			ControlIDs: ids, Attempt: 1 + a,
			Ceilings: pushCeilings(), ServerURL: "https://github.com", Git: publish.GitOptions{BaseURL: w.Base, Token: BotToken},
			Sleep: w.Clock.Sleep, Now: w.Clock.Now, RetryDelay: time.Millisecond,
			Session: render.SessionOptions{},
		}
		if from != nil && from.Res != nil {
			o.LogIssue, o.LogIssueNew = from.Res.LogIssue, from.Res.LogIssueNew
			o.Unsharded = from.Res.EventType == contract.EventAgentSmall
			o.Attempt = from.Attempt + a // the run's later jobs start in the attempt its prepare job proceeded in
		}
		res, err := publish.Run(ctx, o)
		if ledger != nil {
			_ = ledger.Release(ctx) // as runner publish does: unused slots go back
		}
		if err == nil && res.Status == "completed" {
			return res, nil
		}
		if err == nil {
			err = fmt.Errorf("publish %s: status %s (%s): %s", res.JobID, res.Status, res.Cause, strings.Join(res.Problems, "; "))
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("publish failed %d times: %w", attempts, last)
}

// pushCeilings are the default ceilings with allow-push on: the fault rows
// push onto pull request branches.
func pushCeilings() policy.Ceilings {
	c := policy.DefaultCeilings()
	c.AllowPush = true
	return c
}
