package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/testrig/actionwiring"
)

// ErrNoDispatch means the dispatcher handled the mention without sending
// a dispatch: it was ignored, or answered on the thread (a bad !cfg).
var ErrNoDispatch = errors.New("sent no repository_dispatch to " + ControlRepo + " (the mention was ignored or answered on the thread; see the dispatcher's log)")

// Dispatch runs `dispatcher once` as the bot and collects the dispatches.
func (f *Flow) Dispatch(ctx context.Context) error {
	dir, err := f.jobDir("dispatcher")
	if err != nil {
		return err
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"TMPDIR=" + os.TempDir(),
		"BOT_LOGIN=" + BotLogin,
		"BOT_TOKEN=" + BotToken,
		"CONTROL_REPO=" + ControlRepo,
		"ALLOWED_USERS=" + Author,
		"GITHUB_API_URL=" + f.w.BaseURL,
	}
	env = append(env, f.o.DispatcherSettings...)
	st, err := run(ctx, "dispatcher once", dir, f.o.StageTimeout, env, f.o.Bins.Dispatcher, "once")
	f.Dispatcher = st
	if err != nil {
		return err
	}
	if st.ExitCode != 0 {
		return &StageError{Stage: st, Err: fmt.Errorf("exit status %d", st.ExitCode)}
	}
	ds := f.Dispatches()
	if len(ds) == 0 {
		return &StageError{Stage: st, Err: ErrNoDispatch}
	}
	if n := len(f.w.Sim.Dispatches(ControlRepo)) - f.dispatchedBefore; n != len(ds) {
		return &StageError{Stage: st, Err: fmt.Errorf("the simulator holds %d dispatches but the hook saw %d", n, len(ds))}
	}
	f.logf("dispatcher once: %d %s event(s)", len(ds), ds[0].EventType)
	return nil
}

// AssembleAll runs the prepare job of every workflow run the dispatches
// start, up to its assemble step (`runner assemble`), and finds the one
// run that proceeds; that run uploads the context artifact. Its fetch
// step is Fetch.
func (f *Flow) AssembleAll(ctx context.Context) error {
	ds := f.Dispatches()
	if len(ds) == 0 {
		return errors.New("assemble: no dispatches (run Dispatch first)")
	}
	f.Assembles = make([]*Stage, len(ds))
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i := range ds {
		one := func() {
			f.Assembles[i], errs[i] = f.assemble(ctx, i, len(ds))
		}
		if f.o.ParallelShards {
			wg.Add(1)
			go func() { defer wg.Done(); one() }()
		} else {
			one()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, st := range f.Assembles {
		if st.Outputs["ready"] != "true" {
			continue
		}
		if f.Ready != nil {
			return &StageError{Stage: st, Err: fmt.Errorf("a second assemble run proceeds (the first was %s)", f.Ready.Name)}
		}
		f.Ready = st
	}
	if f.Ready == nil {
		return fmt.Errorf("assemble: none of the %d runs proceeded (ready=true)", len(ds))
	}
	out := f.Ready.Outputs
	f.JobID, f.ContextSHA = out["jobid"], out["context_sha256"]
	f.RunID, _ = f.Ready.Getenv("GITHUB_RUN_ID")
	n, err := strconv.Atoi(out["log_issue"])
	if err != nil || n <= 0 {
		return &StageError{Stage: f.Ready, Err: fmt.Errorf("output log_issue=%q is not an issue number", out["log_issue"])}
	}
	f.LogIssue = n
	f.prepareAttempt = f.runAttempt()
	f.TargetDir = ""
	// upload-artifact: the context, the files assemble put beside it and
	// the run record it started (runs/<run id>-<attempt>/)
	ups, err := f.uploads("prepare")
	if err != nil {
		return err
	}
	stage := filepath.Join(f.Ready.Dir, "upload-context")
	if err := copyFiles(filepath.Join(f.Ready.Dir, "runs"), stage); err != nil {
		return fmt.Errorf("upload the context artifact: %w", err)
	}
	if rec := filepath.Join(f.Ready.Dir, "runs", f.recordName()); dirExists(rec) {
		if err := copyTree(rec, filepath.Join(stage, f.recordName())); err != nil {
			return fmt.Errorf("upload the context artifact: %w", err)
		}
	}
	if f.ContextDir, err = f.art.upload(ups[0], stage); err != nil {
		return &StageError{Stage: f.Ready, Err: err}
	}
	f.logf("%s proceeds: job %s, log issue %s#%d", f.Ready.Name, f.JobID, ControlRepo, f.LogIssue)
	return nil
}

func (f *Flow) assemble(ctx context.Context, i, n int) (*Stage, error) {
	d := f.Dispatches()[i]
	runID := strconv.Itoa(firstRunID + f.round*runIDsPerRound + i)
	attempt := f.runAttempt()
	name := runID + "-prepare"
	if attempt > 1 {
		name += "-" + strconv.Itoa(attempt)
	}
	dir, err := f.jobDir(name)
	if err != nil {
		return nil, err
	}
	ev, err := f.dispatchEvent(d)
	if err != nil {
		return nil, fmt.Errorf("assemble %d/%d: event file: %w", i+1, n, err)
	}
	evPath := filepath.Join(dir, "event.json")
	if err := os.WriteFile(evPath, ev, 0o644); err != nil {
		return nil, fmt.Errorf("assemble: %w", err)
	}
	outPath := filepath.Join(dir, "github_output")
	env := append(append(f.baseEnv(dir, "prepare", runID, attempt), f.tokens["assemble"]...),
		"GITHUB_EVENT_PATH="+evPath,
		"GITHUB_OUTPUT="+outPath,
		"GITHUB_STEP_SUMMARY="+filepath.Join(dir, "step_summary.md"),
	)
	st, err := run(ctx, fmt.Sprintf("assemble %d/%d (run %s)", i+1, n, runID), dir, f.o.StageTimeout, env, f.o.Bins.Runner, "assemble")
	if err != nil {
		return st, err
	}
	if st.ExitCode != 0 {
		return st, &StageError{Stage: st, Err: fmt.Errorf("exit status %d", st.ExitCode)}
	}
	if st.Outputs, err = actions.ReadOutputs(outPath); err != nil {
		return st, &StageError{Stage: st, Err: err}
	}
	f.logf("%s: ready=%s", st.Name, st.Outputs["ready"])
	return st, nil
}

// Fetch runs the prepare job's fetch step (`runner fetch` with the bot's
// token) in the run that proceeds, on the context assemble wrote there: it
// fetches the code the agent works on (the PR head at the recorded
// commit, or the default branch) and uploads it as the target artifact.
func (f *Flow) Fetch(ctx context.Context) error {
	if f.Ready == nil {
		return errors.New("fetch: no assemble run proceeded (run AssembleAll first)")
	}
	dir := f.Ready.Dir
	env := append(append(f.baseEnv(dir, "prepare", f.RunID, f.prepareAttempt), f.tokens["fetch"]...),
		"MR_CONTEXT_SHA256="+f.ContextSHA,
		"MR_TARGET_DIR=target-code",
	)
	st, err := run(ctx, "fetch (run "+f.RunID+")", dir, f.o.StageTimeout, env, f.o.Bins.Runner, "fetch")
	f.Fetched = st
	if err != nil {
		return err
	}
	f.logf("%s: exit %d", st.Name, st.ExitCode)
	if st.ExitCode != 0 {
		return &StageError{Stage: st, Err: fmt.Errorf("exit status %d", st.ExitCode)}
	}
	ups, err := f.uploads("prepare")
	if err != nil {
		return err
	}
	if f.TargetDir, err = f.art.upload(ups[1], filepath.Join(dir, "target-code")); err != nil {
		return &StageError{Stage: st, Err: err}
	}
	return nil
}

// RunAgent runs `runner agent` with no token anywhere in its environment,
// on the downloaded context and the target's code from the prepare job
// (checked out by the agent stage itself), then uploads the run record. A
// failed agent job is an error, but the record is uploaded anyway so
// publish can report it. Called again, it is a re-run of the agent job
// (RerunFailed).
func (f *Flow) RunAgent(ctx context.Context) error {
	if f.Ready == nil {
		return errors.New("agent: no assemble run proceeded (run AssembleAll first)")
	}
	if f.TargetDir == "" {
		// the agent job needs the prepare job's fetch step, as in the workflow
		if err := f.Fetch(ctx); err != nil {
			return err
		}
	}
	attempt := f.runAttempt()
	name := f.RunID + "-agent"
	if attempt > 1 {
		name += "-" + strconv.Itoa(attempt)
	}
	dir, err := f.jobDir(name)
	if err != nil {
		return err
	}
	call := f.call(attempt)
	tr, err := f.transfers("agent", call)
	if err != nil {
		return err
	}
	downs, ups := split(tr)
	if len(downs) != 2 || len(ups) != 1 {
		return fmt.Errorf("agent: %s's agent job downloads %d and uploads %d artifacts; the demo knows 2 and 1", actionwiring.WorkflowFile, len(downs), len(ups))
	}
	ctxArt, err := f.art.dir(downs[0].Name)
	if err != nil {
		return fmt.Errorf("agent: download the context artifact: %w", err)
	}
	if err := copyFiles(ctxArt, filepath.Join(dir, "context")); err != nil {
		return fmt.Errorf("agent: download the context artifact: %w", err)
	}
	// the record assemble started goes where the agent keeps its own
	if rec := filepath.Join(ctxArt, f.recordName()); dirExists(rec) {
		if err := copyTree(rec, filepath.Join(dir, "runs", f.recordName())); err != nil {
			return fmt.Errorf("agent: download the context artifact: %w", err)
		}
	}
	target, err := f.art.dir(downs[1].Name)
	if err != nil {
		return fmt.Errorf("agent: download the target artifact: %w", err)
	}
	if err := copyFiles(target, filepath.Join(dir, "target-code")); err != nil {
		return fmt.Errorf("agent: download the target artifact: %w", err)
	}
	env := append(append(f.baseEnv(dir, "agent", f.RunID, attempt), f.tokens["agent"]...),
		"MR_TARGET_DIR=target-code",
		"MR_CONTEXT_FILE=context/context.json",
		"MR_CONTEXT_SHA256="+f.ContextSHA,
		"MR_LOG_ISSUE="+strconv.Itoa(f.LogIssue),
		"MR_LOG_ISSUE_NEW="+f.Ready.Outputs["log_issue_new"],
		"MR_SHARDED="+f.Ready.Outputs["sharded"],
		"MR_WORKSPACE=workspace",
		"GITHUB_OUTPUT="+filepath.Join(dir, "github_output"),
	)
	switch f.o.Engine {
	case EngineReplay:
		env = append(env, "MR_REPLAY_SCRIPT="+f.o.ReplayScript)
	case EngineClaude:
		env = append(env, "MR_CLAUDE_BIN="+f.o.ClaudeBin)
	case EngineCodex:
		env = append(env, "MR_CODEX_BIN="+f.o.CodexBin)
	case EngineGemini:
		env = append(env, "MR_GEMINI_BIN="+f.o.GeminiBin)
	}
	env = append(env, f.o.EngineEnv...)
	st, err := run(ctx, fmt.Sprintf("agent (run %s, attempt %d)", f.RunID, attempt), dir, f.o.StageTimeout, env, f.o.Bins.Runner, "agent")
	f.Agent = st
	f.agentAttempt = attempt
	// upload-artifact runs with if: always().
	if rec := filepath.Join(dir, "runs"); dirExists(rec) {
		dst, uerr := f.art.upload(ups[0], rec)
		if uerr != nil {
			return errors.Join(err, &StageError{Stage: st, Err: uerr})
		}
		f.AgentRunDir = filepath.Join(rec, f.recordName())
		f.RecordDir = filepath.Join(dst, f.recordName())
	}
	if err != nil {
		return err
	}
	st.Outputs, _ = actions.ReadOutputs(filepath.Join(dir, "github_output"))
	f.logf("%s: exit %d, status %s", st.Name, st.ExitCode, st.Outputs["status"])
	if st.ExitCode != 0 {
		return &StageError{Stage: st, Err: fmt.Errorf("exit status %d", st.ExitCode)}
	}
	return nil
}

// Publish runs `runner publish` with the tokens the workflow gives it (the bot's
// for the targets, the workflow's own for the control repo) on the downloaded
// artifacts. Calling it again is a re-run of the publish job: the workflow
// run's next attempt.
func (f *Flow) Publish(ctx context.Context) (*Stage, error) {
	if f.Ready == nil {
		return nil, errors.New("publish: no assemble run proceeded")
	}
	if f.publishedIn == f.runAttempt() {
		f.attempt = f.runAttempt() + 1
	}
	attempt := f.runAttempt()
	f.publishedIn = attempt
	name := f.RunID + "-publish"
	if n := len(f.Publishes) + 1; n > 1 {
		name += "-" + strconv.Itoa(n)
	}
	dir, err := f.jobDir(name)
	if err != nil {
		return nil, err
	}
	call := f.call(attempt)
	if f.Agent != nil {
		outs, err := f.wiring.JobOutputs("agent", f.call(f.agentAttempt))
		if err != nil {
			return nil, err
		}
		call.Needs["agent"] = outs
	}
	tr, err := f.transfers("publish", call)
	if err != nil {
		return nil, err
	}
	downs, ups := split(tr)
	if len(downs) != 2 || len(ups) != 1 {
		return nil, fmt.Errorf("publish: %s's publish job downloads %d and uploads %d artifacts; the demo knows 2 and 1", actionwiring.WorkflowFile, len(downs), len(ups))
	}
	ctxArt, err := f.art.dir(downs[0].Name)
	if err != nil {
		return nil, fmt.Errorf("publish: download the context artifact: %w", err)
	}
	if err := copyFiles(ctxArt, filepath.Join(dir, "context")); err != nil {
		return nil, fmt.Errorf("publish: download the context artifact: %w", err)
	}
	// A missing run-record artifact is what publish must report, not an
	// error here (the step has continue-on-error).
	if rec, err := f.art.dir(downs[1].Name); err == nil {
		if err := copyTree(rec, filepath.Join(dir, "runs")); err != nil {
			return nil, fmt.Errorf("publish: download the run record: %w", err)
		}
	}
	env := append(append(f.baseEnv(dir, "publish", f.RunID, attempt), f.tokens["publish"]...),
		"MR_CONTEXT_FILE=context/context.json",
		"MR_CONTEXT_SHA256="+f.ContextSHA,
		"MR_LOG_ISSUE="+strconv.Itoa(f.LogIssue),
		"MR_LOG_ISSUE_NEW="+f.Ready.Outputs["log_issue_new"],
		"MR_SHARDED="+f.Ready.Outputs["sharded"],
		"GITHUB_STEP_SUMMARY="+filepath.Join(dir, "step_summary.md"),
	)
	st, err := run(ctx, fmt.Sprintf("publish (run %s, attempt %d)", f.RunID, attempt), dir, f.o.StageTimeout, env, f.o.Bins.Runner, "publish")
	if st != nil {
		f.Publishes = append(f.Publishes, st)
		// upload-artifact (if: always()): the complete record
		if rec := filepath.Join(dir, "runs"); dirExists(rec) {
			dst, uerr := f.art.upload(ups[0], rec)
			if uerr != nil {
				return st, &StageError{Stage: st, Err: fmt.Errorf("publish: upload the complete record: %w", uerr)}
			}
			f.FinalRecordDir = filepath.Join(dst, f.recordName())
		}
	}
	if err != nil {
		return st, err
	}
	f.logf("%s: exit %d", st.Name, st.ExitCode)
	if st.ExitCode != 0 {
		return st, &StageError{Stage: st, Err: fmt.Errorf("exit status %d", st.ExitCode)}
	}
	return st, nil
}

// RerunFailed is "Re-run failed jobs" after the agent job failed: the
// workflow run's next attempt runs the agent job and publish (which
// needs it) again; the prepare job's artifacts stay. Like GitHub, each
// upload of a name the run already holds is a 409 unless the step says
// overwrite.
func (f *Flow) RerunFailed(ctx context.Context) error {
	if f.Agent == nil {
		return errors.New("re-run: the agent job has not run")
	}
	f.attempt = f.runAttempt() + 1
	agentErr := f.RunAgent(ctx)
	if _, err := f.Publish(ctx); err != nil {
		return errors.Join(agentErr, err)
	}
	return agentErr
}

// runIDsPerRound spaces the run ids of each delivery of the dispatches.
const runIDsPerRound = 1000

// Redeliver delivers the same dispatches again, as GitHub does when an
// event is sent twice: new workflow runs, with fresh artifacts, assemble
// the job again (and must not start it a second time).
func (f *Flow) Redeliver(ctx context.Context) error {
	f.round++
	f.attempt = 1
	f.reset()
	return f.AssembleAll(ctx)
}

// Rerun re-runs the prepare job of the last delivery's workflow runs (the
// "Re-run jobs" button): same run ids, the next attempt; the run's other
// artifacts stay.
func (f *Flow) Rerun(ctx context.Context) error {
	f.attempt = f.runAttempt() + 1
	f.Assembles, f.Ready = nil, nil
	return f.AssembleAll(ctx)
}

func (f *Flow) reset() {
	f.Assembles, f.Ready, f.Fetched, f.Agent, f.Publishes = nil, nil, nil, nil, nil
	f.RunID, f.JobID, f.LogIssue, f.ContextSHA, f.RecordDir, f.ContextDir, f.AgentRunDir = "", "", 0, "", "", "", ""
	f.TargetDir = ""
	f.prepareAttempt, f.agentAttempt, f.publishedIn = 0, 0, 0
	f.art.reset()
}

// runAttempt is GITHUB_RUN_ATTEMPT of the workflow run's next jobs.
func (f *Flow) runAttempt() int { return max(f.attempt, 1) }

// recordName is the run record's directory: assemble starts it in the
// prepare job's attempt and the later jobs continue it.
func (f *Flow) recordName() string {
	return f.RunID + "-" + strconv.Itoa(max(f.prepareAttempt, 1))
}

// call is what the workflow's expressions see in attempt attempt of the
// run that proceeds.
func (f *Flow) call(attempt int) actionwiring.Call {
	ready := map[string]string{}
	if f.Ready != nil {
		ready = f.Ready.Outputs
	}
	return actionwiring.Call{
		With:   map[string]string{"bot-login": BotLogin, "runner-ref": "demo", "engine": f.o.Engine},
		GitHub: map[string]string{"token": ControlToken, "repository": ControlRepo, "run_id": f.RunID, "run_attempt": strconv.Itoa(attempt)},
		Needs:  map[string]map[string]string{"prepare": ready},
		Steps:  map[string]map[string]string{"assemble": ready},
	}
}

// uploads are the prepare job's uploads in the run that proceeds: the
// context first, then the target's code.
func (f *Flow) uploads(job string) ([]actionwiring.Transfer, error) {
	tr, err := f.transfers(job, f.call(f.runAttempt()))
	if err != nil {
		return nil, err
	}
	_, ups := split(tr)
	if len(ups) != 2 {
		return nil, fmt.Errorf("%s's %s job uploads %d artifacts; the demo knows 2 (the context, the target's code)", actionwiring.WorkflowFile, job, len(ups))
	}
	return ups, nil
}

func (f *Flow) transfers(job string, c actionwiring.Call) ([]actionwiring.Transfer, error) {
	tr, err := f.wiring.Artifacts(job, c)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return tr, nil
}

func split(tr []actionwiring.Transfer) (downs, ups []actionwiring.Transfer) {
	for _, t := range tr {
		if t.Upload {
			ups = append(ups, t)
		} else {
			downs = append(downs, t)
		}
	}
	return downs, ups
}
