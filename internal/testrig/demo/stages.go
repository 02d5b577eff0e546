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
	if n := len(f.w.Sim.Dispatches(ControlRepo)); n != len(ds) {
		return &StageError{Stage: st, Err: fmt.Errorf("the simulator holds %d dispatches but the hook saw %d", n, len(ds))}
	}
	f.logf("dispatcher once: %d %s event(s)", len(ds), ds[0].EventType)
	return nil
}

// AssembleAll runs `runner assemble` once per dispatch, each as its own
// workflow run, and finds the one run that proceeds.
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
	// upload-artifact: the context (and anything assemble put beside it).
	f.ContextDir = filepath.Join(f.o.OutDir, "artifacts", "context")
	if err := copyFiles(filepath.Join(f.Ready.Dir, "runs"), f.ContextDir); err != nil {
		return fmt.Errorf("upload the context artifact: %w", err)
	}
	// …and the run record assemble started (runs/<run id>-<attempt>/)
	if rec := filepath.Join(f.Ready.Dir, "runs", f.RunID+"-1"); dirExists(rec) {
		if err := copyTree(rec, filepath.Join(f.ContextDir, f.RunID+"-1")); err != nil {
			return fmt.Errorf("upload the context artifact: %w", err)
		}
	}
	f.logf("%s proceeds: job %s, log issue %s#%d", f.Ready.Name, f.JobID, ControlRepo, f.LogIssue)
	return nil
}

func (f *Flow) assemble(ctx context.Context, i, n int) (*Stage, error) {
	d := f.Dispatches()[i]
	runID := strconv.Itoa(firstRunID + f.round*runIDsPerRound + i)
	attempt := max(f.attempt, 1)
	name := runID + "-assemble"
	if attempt > 1 {
		name += "-" + strconv.Itoa(attempt)
	}
	dir, err := f.jobDir(name)
	if err != nil {
		return nil, err
	}
	ev, err := f.dispatchEvent(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("assemble %d/%d: event file: %w", i+1, n, err)
	}
	evPath := filepath.Join(dir, "event.json")
	if err := os.WriteFile(evPath, ev, 0o644); err != nil {
		return nil, fmt.Errorf("assemble: %w", err)
	}
	outPath := filepath.Join(dir, "github_output")
	env := append(append(f.baseEnv(dir, "assemble", runID, attempt), f.tokens["assemble"]...),
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

// Fetch runs `runner fetch` with the bot's token on the downloaded context:
// it fetches the code the agent works on (the PR head at the recorded
// commit, or the default branch) and uploads it as the target artifact.
func (f *Flow) Fetch(ctx context.Context) error {
	if f.Ready == nil {
		return errors.New("fetch: no assemble run proceeded (run AssembleAll first)")
	}
	dir, err := f.jobDir(f.RunID + "-fetch")
	if err != nil {
		return err
	}
	if err := copyFiles(f.ContextDir, filepath.Join(dir, "context")); err != nil {
		return fmt.Errorf("fetch: download the context artifact: %w", err)
	}
	env := append(append(f.baseEnv(dir, "fetch", f.RunID, 1), f.tokens["fetch"]...),
		"MR_CONTEXT_FILE=context/context.json",
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
	f.TargetDir = filepath.Join(f.o.OutDir, "artifacts", "target")
	if err := copyFiles(filepath.Join(dir, "target-code"), f.TargetDir); err != nil {
		return fmt.Errorf("fetch: upload the target artifact: %w", err)
	}
	return nil
}

// RunAgent runs `runner agent` with no token anywhere in its environment,
// on the downloaded context and the target's code from the fetch job
// (checked out by the agent stage itself), then uploads the run record. A
// failed agent job is an error, but the record is uploaded anyway so
// publish can report it.
func (f *Flow) RunAgent(ctx context.Context) error {
	if f.Ready == nil {
		return errors.New("agent: no assemble run proceeded (run AssembleAll first)")
	}
	dir, err := f.jobDir(f.RunID + "-agent")
	if err != nil {
		return err
	}
	if err := copyFiles(f.ContextDir, filepath.Join(dir, "context")); err != nil {
		return fmt.Errorf("agent: download the context artifact: %w", err)
	}
	// the record assemble started goes where the agent keeps its own
	if rec := filepath.Join(f.ContextDir, f.RunID+"-1"); dirExists(rec) {
		if err := copyTree(rec, filepath.Join(dir, "runs", f.RunID+"-1")); err != nil {
			return fmt.Errorf("agent: download the context artifact: %w", err)
		}
	}
	if f.TargetDir == "" {
		// the agent job needs the fetch job, as in the workflow
		if err := f.Fetch(ctx); err != nil {
			return err
		}
	}
	if err := copyFiles(f.TargetDir, filepath.Join(dir, "target-code")); err != nil {
		return fmt.Errorf("agent: download the target artifact: %w", err)
	}
	env := append(append(f.baseEnv(dir, "agent", f.RunID, 1), f.tokens["agent"]...),
		"MR_TARGET_DIR=target-code",
		"MR_CONTEXT_FILE=context/context.json",
		"MR_CONTEXT_SHA256="+f.ContextSHA,
		"MR_LOG_ISSUE="+strconv.Itoa(f.LogIssue),
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
	st, err := run(ctx, "agent (run "+f.RunID+")", dir, f.o.StageTimeout, env, f.o.Bins.Runner, "agent")
	f.Agent = st
	// upload-artifact runs with if: always().
	if rec := filepath.Join(dir, "runs"); dirExists(rec) {
		dst := filepath.Join(f.o.OutDir, "artifacts", "run-record")
		if cerr := copyTree(rec, dst); cerr != nil {
			return errors.Join(err, fmt.Errorf("upload the run record: %w", cerr))
		}
		f.AgentRunDir = filepath.Join(rec, f.RunID+"-1")
		f.RecordDir = filepath.Join(dst, f.RunID+"-1")
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
// artifacts. Calling it again is a re-run of the publish job.
func (f *Flow) Publish(ctx context.Context) (*Stage, error) {
	if f.Ready == nil {
		return nil, errors.New("publish: no assemble run proceeded")
	}
	attempt := len(f.Publishes) + 1
	name := f.RunID + "-publish"
	if attempt > 1 {
		name += "-" + strconv.Itoa(attempt)
	}
	dir, err := f.jobDir(name)
	if err != nil {
		return nil, err
	}
	if err := copyFiles(f.ContextDir, filepath.Join(dir, "context")); err != nil {
		return nil, fmt.Errorf("publish: download the context artifact: %w", err)
	}
	// A missing run-record artifact is what publish must report, not an error here.
	if rec := filepath.Join(f.o.OutDir, "artifacts", "run-record"); dirExists(rec) {
		if err := copyTree(rec, filepath.Join(dir, "runs")); err != nil {
			return nil, fmt.Errorf("publish: download the run record: %w", err)
		}
	}
	env := append(append(f.baseEnv(dir, "publish", f.RunID, attempt), f.tokens["publish"]...),
		"MR_CONTEXT_FILE=context/context.json",
		"MR_CONTEXT_SHA256="+f.ContextSHA,
		"MR_LOG_ISSUE="+strconv.Itoa(f.LogIssue),
		"GITHUB_STEP_SUMMARY="+filepath.Join(dir, "step_summary.md"),
	)
	st, err := run(ctx, fmt.Sprintf("publish (run %s, attempt %d)", f.RunID, attempt), dir, f.o.StageTimeout, env, f.o.Bins.Runner, "publish")
	if st != nil {
		f.Publishes = append(f.Publishes, st)
		// upload-artifact (if: always()): the complete record
		if rec := filepath.Join(dir, "runs"); dirExists(rec) {
			dst := filepath.Join(f.o.OutDir, "artifacts", "run-record-final-"+strconv.Itoa(attempt))
			if cerr := copyTree(rec, dst); cerr != nil {
				return st, fmt.Errorf("publish: upload the complete record: %w", cerr)
			}
			f.FinalRecordDir = filepath.Join(dst, f.RunID+"-1")
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

// Rerun re-runs the assemble job of the last delivery's workflow runs (the
// "Re-run jobs" button): same run ids, the next attempt; the run's other
// artifacts stay, and later publish runs count on as further attempts.
func (f *Flow) Rerun(ctx context.Context) error {
	f.attempt = max(f.attempt, 1) + 1
	f.Assembles, f.Ready = nil, nil
	return f.AssembleAll(ctx)
}

func (f *Flow) reset() {
	f.Assembles, f.Ready, f.Fetched, f.Agent, f.Publishes = nil, nil, nil, nil, nil
	f.RunID, f.JobID, f.LogIssue, f.ContextSHA, f.RecordDir, f.ContextDir, f.AgentRunDir = "", "", 0, "", "", "", ""
	f.TargetDir = ""
	_ = os.RemoveAll(filepath.Join(f.o.OutDir, "artifacts"))
}
