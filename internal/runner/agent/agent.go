// Package agent is `runner agent`: the untrusted stage. It verifies the
// context from assemble, derives the effective policy, writes a sanitized
// copy of the context and the prompt, starts the engine with the gate as
// its only way to write, enforces the wall-clock timeout, turn limit and
// loop detection, and records everything in the run directory. It holds no
// GitHub token and passes none to the engine.
package agent

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/mention"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/prdiff"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/core/sanitize"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
	"github.com/mention-runner/mention-runner/internal/runner/agent/prompt"
	"github.com/mention-runner/mention-runner/internal/runner/checkout"
	"github.com/mention-runner/mention-runner/internal/runner/config"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/loopdetect"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Files the agent stage writes into the run directory besides the record.
const (
	AgentContextFile = "context.agent.json" // the sanitized context the agent reads
	PromptFile       = "prompt.md"
	GateConfigFile   = "gate.json"
)

// Options configure one agent stage.
type Options struct {
	Config *config.Config
	// Getenv reads the runner's environment (GITHUB_RUN_ID…, and the values
	// the engine's allow-list passes on).
	Getenv func(string) string
	// Environ lists the runner's environment as KEY=VALUE; only its names
	// are used, to find variables an allowed prefix matches.
	Environ []string
	// Executable is the runner binary that serves the gate (`runner mcp`);
	// "" means os.Executable().
	Executable string
	// Engine overrides the engine Config.Engine names (tests).
	Engine engine.Engine
	Now    func() time.Time
	// Log receives a few progress lines for the job log; nil discards them.
	Log io.Writer
	// FS takes the stage's own writes (run record, outputs file, prompt);
	// nil is the real file system. Tests inject local failures through it.
	FS localfs.FS
}

// Causes the engine's context is cancelled with.
var (
	errTimeout = errors.New("wall-clock timeout")
	errLoop    = errors.New("loop detected")
)

// RunError is a run that ended as failed; the record holds the details.
type RunError struct {
	Outcome *record.Outcome
	RunDir  string
}

func (e *RunError) Error() string {
	// the whole original text: it is what a person debugging the job needs
	return redact.String(fmt.Sprintf("run %s failed (%s), record in %s:\n%s", e.Outcome.RunID, e.Outcome.Failure, e.RunDir, e.Outcome.Error))
}

// Run runs the agent stage. The outcome is returned whenever a run
// directory was created; err is a *RunError when the run failed, or
// another error when not even the record could be written.
func Run(ctx context.Context, o Options) (*record.Outcome, string, error) {
	if o.Config == nil {
		return nil, "", errors.New("agent: no configuration")
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	runID, err := RunID(o.Getenv)
	if err != nil {
		return nil, "", err
	}
	runID = continueRecord(o.Config.RunDir, runID)
	r := &run{o: o, cfg: o.Config, dir: filepath.Join(o.Config.RunDir, runID),
		loop: loopdetect.New(o.Config.LoopThreshold)}
	r.out = record.Outcome{RunID: runID, Engine: o.Config.Engine, Model: o.Config.Model, StartedAt: o.Now().UTC()}
	r.gateLog = &gateTail{path: filepath.Join(r.dir, contract.GateLogFile)}
	return r.execute(ctx)
}

// run is one agent stage in progress.
type run struct {
	o         Options
	cfg       *config.Config
	dir       string
	sessionID string
	prompt    string // the rendered prompt the engine got

	rec     *record.Recorder
	builder *record.Builder
	meta    record.RunMeta
	out     record.Outcome
	job     *job.Job

	loop     *loopdetect.Detector
	stop     context.CancelCauseFunc
	gateLog  *gateTail
	problems []error  // record failures, reported at the end
	cleanup  []func() // run when the stage ends
	// outputsCreated: outputs.jsonl was created before the engine started
	outputsCreated bool
	// fetched is the manifest of the code the fetch step handed on (zero
	// without MR_TARGET_DIR)
	fetched checkout.Manifest
}

func (r *run) logf(format string, a ...any) {
	fmt.Fprintf(r.o.Log, "runner agent: "+format+"\n", a...)
}

func (r *run) execute(ctx context.Context) (*record.Outcome, string, error) {
	raw, ctxErr := LoadContext(r.cfg.ContextFile, r.cfg.ContextSHA256)
	var jobErr error
	taskID := "unverified"
	if ctxErr == nil {
		r.job, jobErr = job.FromContext(raw, r.cfg.BotLogin)
		if r.job != nil {
			taskID = r.job.JobID
		}
	}
	r.out.JobID = taskID
	r.sessionID = record.SessionID(taskID, r.out.RunID)
	rec, err := record.OpenFS(r.o.FS, r.dir, record.Meta{RunID: r.out.RunID, SessionID: r.sessionID, TaskID: taskID}, r.o.Now)
	if err != nil {
		// no record can be written: the job log is the only place left
		if lf := localfs.Classify(err); lf != nil {
			return nil, r.dir, fmt.Errorf("agent: cannot write the run record, %s: %w", lf, err)
		}
		return nil, r.dir, fmt.Errorf("agent: %w", err)
	}
	r.rec = rec
	r.meta = record.RunMeta{RunID: r.out.RunID, JobID: taskID, SessionID: r.sessionID, Engine: r.cfg.Engine,
		Model: r.cfg.Model, StartedAt: &r.out.StartedAt, Status: "running", WorkflowRunURL: r.workflowRunURL()}
	r.logf("run %s, record in %s", r.out.RunID, r.dir)
	// assemble started the record when its events came along with the
	// context; otherwise this job creates the run
	typ, what := contract.EventRunCreated, "run "+r.out.RunID+" created"
	if rec.Continued() {
		typ, what = contract.EventAgentStarted, "agent job started"
	}
	r.emit(typ, record.SeverityInfo, what,
		map[string]any{"run_id": r.out.RunID, "jobid": taskID, "engine": r.cfg.Engine, "context_file": r.cfg.ContextFile})
	if ctxErr == nil {
		r.emit(contract.EventFileRead, record.SeverityInfo, "context file read and verified",
			map[string]any{"path": r.cfg.ContextFile, "bytes": len(raw), "sha256": r.cfg.ContextSHA256})
	}

	defer func() {
		for _, f := range r.cleanup {
			f()
		}
	}()
	home, err := os.MkdirTemp("", "mr-agent-home-")
	if err != nil {
		return r.finish(contract.CauseFailed, fmt.Errorf("create the engine's home: %w", err))
	}
	defer os.RemoveAll(home)
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		return r.finish(contract.CauseFailed, fmt.Errorf("create the engine's home: %w", err))
	}
	wd, _ := r.workspacePath() // its error surfaces in workDir
	env, dropped := EngineEnv(EnvSource{Engine: r.cfg.Engine, Getenv: r.o.Getenv, Environ: r.o.Environ, Home: home, WorkDir: wd})
	r.emitConfig(env, dropped)

	switch {
	case ctxErr != nil:
		r.emit(contract.EventFileRejected, record.SeverityError, "context file refused: "+ctxErr.Error(),
			map[string]any{"path": r.cfg.ContextFile, "reason": ctxErr.Error()})
		return r.finish(contract.CauseFailed, ctxErr)
	case errors.Is(jobErr, job.ErrNoMention):
		return r.finish(contract.CauseFailed, fmt.Errorf("the trigger comment does not mention @%s, so there is no task: %w", r.cfg.BotLogin, jobErr))
	case jobErr != nil:
		return r.finish(contract.CauseFailed, fmt.Errorf("read the job from the context: %w", jobErr))
	}
	spec, err := r.prepare(ctx, raw, env)
	if err != nil {
		return r.finish(contract.CauseFailed, err)
	}
	eng, err := r.engine()
	if err != nil {
		return r.finish(contract.CauseFailed, err)
	}
	r.out.Engine, r.meta.Engine = eng.Name(), eng.Name()
	return r.runEngine(ctx, eng, spec)
}

// prepare derives the policy and writes the sanitized context, the prompt
// and the gate's configuration; it returns the engine's spec.
func (r *run) prepare(ctx context.Context, raw []byte, env []string) (engine.Spec, error) {
	j := r.job
	threadURL := r.threadURL()
	r.meta.Target, r.meta.TargetURL = fmt.Sprintf("%s#%d", j.Repo, j.Number), threadURL
	r.meta.TriggerAuthor, r.meta.TriggerURL = j.Author, j.TriggerURL

	ceilings := r.cfg.Ceilings()
	if err := ceilings.Validate(); err != nil {
		return engine.Spec{}, err
	}
	snapPath := filepath.Join(filepath.Dir(r.cfg.ContextFile), contract.BlocklistSnapshotFile)
	list, err := LoadBlocklistSnapshot(snapPath)
	if err != nil {
		return engine.Spec{}, err
	}
	repoIDs, err := LoadRepoIDs(filepath.Join(filepath.Dir(r.cfg.ContextFile), contract.RepoIDsFile), raw)
	if err != nil {
		return engine.Spec{}, err
	}
	var blocker policy.Blocker
	patterns := 0
	if list != nil {
		blocker, patterns = list, len(list.Entries)
	}
	pol := j.Policy(ceilings, blocker)
	r.meta.PolicyWords = pol.Words()

	workDir, err := r.workDir()
	if err != nil {
		return engine.Spec{}, err
	}
	var target checkout.Target
	if r.cfg.TargetDir != "" {
		if target, err = checkout.FromContext(raw); err != nil {
			return engine.Spec{}, err
		}
	}
	repo, startCommit, err := r.checkoutTarget(ctx, workDir, &target)
	if err != nil {
		return engine.Spec{}, err
	}
	// The pull request's diff comes with the code, read at the same commit
	// by the fetch step (prdiff); it joins the agent's copy of the context.
	forAgent := raw
	diffFile, noDiff := "", "the run fetched no code"
	if diff, rec, ok, err := checkout.ReadDiff(r.cfg.TargetDir, r.fetched, r.cfg.MaxDiffBytes); err != nil {
		return engine.Spec{}, err
	} else if ok {
		if forAgent, err = prdiff.Into(raw, diff, rec); err != nil {
			return engine.Spec{}, err
		}
		if noDiff = ""; rec.Unavailable != "" {
			noDiff = "GitHub would not send it: " + rec.Unavailable
		} else if diffFile, err = filepath.Abs(filepath.Join(r.cfg.TargetDir, checkout.DiffFile)); err != nil {
			return engine.Spec{}, fmt.Errorf("diff path: %w", err)
		}
	}
	clean, rep, err := sanitize.Context(forAgent, j.TriggerID)
	if err != nil {
		return engine.Spec{}, fmt.Errorf("sanitize the context: %w", err)
	}
	// The agent never needs a secret someone pasted in the thread, and
	// this file and the prompt go into the run record: both are redacted.
	clean = redact.JSON(clean)
	ctxPath, err := filepath.Abs(filepath.Join(r.dir, AgentContextFile))
	if err != nil {
		return engine.Spec{}, fmt.Errorf("sanitized context path: %w", err)
	}
	if err := localfs.Or(r.o.FS).WriteFile(ctxPath, clean, 0o644); err != nil {
		return engine.Spec{}, fmt.Errorf("write the sanitized context: %w", err)
	}
	r.emit(contract.EventFileWritten, record.SeverityInfo, "sanitized context written for the agent",
		map[string]any{"path": AgentContextFile, "bytes": len(clean)})
	r.emit(contract.EventContextSanitized, record.SeverityInfo, "sanitized context written for the agent",
		map[string]any{"path": AgentContextFile, "bytes": len(clean), "dropped": rep.Dropped, "withheld_edited": rep.WithheldEdited,
			"trigger_edited": rep.TriggerEdited, "blocklist_snapshot": list != nil, "blocklist_patterns": patterns})

	system := ""
	if p := r.cfg.SystemPromptFile; p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return engine.Spec{}, fmt.Errorf("read the system prompt file (MR_SYSTEM_PROMPT_FILE): %w", err)
		}
		system = string(b)
	}
	items, err := prompt.Describe(clean)
	if err != nil {
		return engine.Spec{}, err
	}
	text := prompt.Render(prompt.Input{
		SystemPrompt: system, Bot: r.cfg.BotLogin, Repo: j.Repo, Number: j.Number, IsPR: j.IsPR,
		ThreadURL: threadURL, TriggerURL: j.TriggerURL, Author: j.Author, Task: j.Task,
		ContextPath: ctxPath, Context: items, WorkDir: workDir, PolicyWords: pol.Words(), CanEdit: canEdit(r.cfg.AllowedTools),
		Tools: pol.Tools(j.IsPR),
	})
	text = redact.String(text)
	if err := localfs.Or(r.o.FS).WriteFile(filepath.Join(r.dir, PromptFile), []byte(text), 0o644); err != nil {
		return engine.Spec{}, fmt.Errorf("write the prompt: %w", err)
	}
	r.meta.Prompt = text
	r.emit(contract.EventFileWritten, record.SeverityInfo, "prompt written", map[string]any{"path": PromptFile, "bytes": len(text)})
	sum := sha256.Sum256([]byte(text))
	r.emit(contract.EventPromptRendered, record.SeverityInfo, fmt.Sprintf("prompt rendered (%d bytes)", len(text)),
		map[string]any{"path": PromptFile, "bytes": len(text), "sha256": hex.EncodeToString(sum[:]),
			"system_prompt_file": r.cfg.SystemPromptFile, "policy": pol.Words(), "context_items": len(items)})

	gatePath, err := filepath.Abs(filepath.Join(r.dir, GateConfigFile))
	if err != nil {
		return engine.Spec{}, fmt.Errorf("gate config path: %w", err)
	}
	runDirAbs, err := filepath.Abs(r.dir)
	if err != nil {
		return engine.Spec{}, fmt.Errorf("run dir: %w", err)
	}
	gc := gate.Config{
		RunDir: runDirAbs, Bot: r.cfg.BotLogin, Here: gate.Thread{Repo: j.Repo, Number: j.Number},
		// the raw inputs publish decides from, not pol: the gate builds the
		// same policy with the same function
		Flags: j.Flags.String(), Ceilings: &ceilings, Blocklist: list, RepoIDs: repoIDs,
		AllowWorkflowChanges: r.cfg.AllowWorkflowChanges, MaxBundleBytes: int64(r.cfg.MaxBundleBytes), JobID: j.JobID,
		// the facts reviews and label changes are checked against, as
		// publish gathers them again from trusted data
		HereIsPR: j.IsPR, DiffFile: diffFile, NoDiff: noDiff,
	}
	gc.Labels, gc.LabelsMissing = job.Labels(raw)
	if can, known := job.CanLabel(raw); known && !can {
		gc.NoTriage = true
	}
	// Only a checkout the runner made from the fetched code can become a
	// pull request; without one the gate refuses them.
	if startCommit != "" {
		gc.WorkDir, gc.GitDir, gc.StartCommit, gc.CheckoutRepo = workDir, repo.GitDir, startCommit, j.Repo
		gc.DefaultBase = target.StackedBase()
	}
	if err := gc.WriteFile(gatePath); err != nil {
		return engine.Spec{}, err
	}
	// outputs.jsonl exists (empty) before the engine starts: a file the gate
	// cannot write fails here, named, and one missing at the end was removed
	if err := r.createOutputs(); err != nil {
		return engine.Spec{}, err
	}
	exe := r.o.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return engine.Spec{}, fmt.Errorf("find the runner executable for the gate: %w", err)
		}
	}
	return engine.Spec{
		Prompt: text, WorkDir: workDir, RunDir: runDirAbs,
		GateCommand: []string{exe, "mcp", "--config", gatePath},
		// engines without confined file tools of their own read (and edit) the checkout through these
		FilesCommand: []string{exe, "mcp-files", "--root", workDir},
		Env:          env, MaxTurns: r.cfg.MaxTurns, Model: r.cfg.Model, MaxBudgetUSD: r.cfg.MaxBudgetUSD,
		ContextFile: ctxPath,
		// the sanitized context lives outside the checkout; allow reading it
		AllowedTools: append([]string{"Read(/" + ctxPath + ")"}, r.cfg.AllowedTools...),
	}, nil
}

func (r *run) engine() (engine.Engine, error) {
	if r.o.Engine != nil {
		return r.o.Engine, nil
	}
	switch r.cfg.Engine {
	case claude.Name:
		return claude.New(r.cfg.ClaudeBin), nil
	case codex.Name:
		return codex.New(r.cfg.CodexBin), nil
	case gemini.Name:
		return gemini.New(r.cfg.GeminiBin), nil
	case "replay":
		return newReplay(r.cfg)
	}
	return nil, fmt.Errorf("unknown engine %q (MR_ENGINE): want claude, codex, gemini or replay", r.cfg.Engine)
}

// runEngine runs the engine under the limits and ends the run.
func (r *run) runEngine(ctx context.Context, eng engine.Engine, spec engine.Spec) (*record.Outcome, string, error) {
	r.builder = record.NewBuilder(r.rec, session.Session{ID: r.sessionID, Intent: firstLine(r.userTask()),
		CreatedAt: r.out.StartedAt, UpdatedAt: r.out.StartedAt, UserID: r.job.Author})
	// [User] is what the person asked, whatever the engine echoes: the
	// rendered prompt (runner paths, headings) stays in prompt.md.
	r.prompt = spec.Prompt
	if task := r.userTask(); task != "" {
		if err := r.builder.Add(session.Event{Kind: session.EventUserText, Time: r.out.StartedAt, Text: task}); err != nil {
			r.problems = append(r.problems, err)
		}
	}
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, r.cfg.Timeout, errTimeout)
	defer cancelTimeout()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.stop = stop

	r.emit(contract.EventRunStarted, record.SeverityInfo, "engine "+eng.Name()+" started",
		map[string]any{"engine": eng.Name(), "workdir": spec.WorkDir, "max_turns": spec.MaxTurns, "timeout": r.cfg.Timeout.String(),
			"loop_threshold": r.loop.Threshold(), "allowed_tools": spec.AllowedTools, "gate_command": spec.GateCommand})
	r.logf("engine %s started (timeout %s, max turns %d)", eng.Name(), r.cfg.Timeout, r.cfg.MaxTurns)
	res, engErr := eng.Run(ctx, spec, r.sink)
	cause := context.Cause(ctx)
	if err := r.builder.Finish(); err != nil {
		r.problems = append(r.problems, err)
	}
	r.drainGate(true)
	if res != nil {
		r.out.Turns, r.out.CostUSD = res.NumTurns, res.TotalCostUSD
		// An engine stopped at its turn limit counts the turn it was refused
		// (Claude Code reports max+1): the record says the turns it had.
		if res.Subtype == "error_max_turns" && r.cfg.MaxTurns > 0 && r.out.Turns > r.cfg.MaxTurns {
			r.out.Turns = r.cfg.MaxTurns
		}
	} else {
		// stopped or crashed before a result: count the replies we saw
		r.out.Turns = countMessages(r.builder.Session(), "assistant")
	}
	failure, ferr := r.classify(ctx, cause, res, engErr)
	return r.finish(failure, ferr)
}

// classify turns how the engine ended into a failure kind and the error
// text for the report ("" and nil when the run completed).
func (r *run) classify(ctx context.Context, cause error, res *session.Result, engErr error) (string, error) {
	switch {
	case errors.Is(cause, errLoop):
		return contract.CauseLoop, fmt.Errorf("stopped: %s", r.loop.Loop().Excerpt())
	case errors.Is(cause, errTimeout):
		return contract.CauseTimeout, fmt.Errorf("stopped: the engine ran past the wall-clock limit of %s (MR_TIMEOUT)", r.cfg.Timeout)
	case cause != nil && ctx.Err() != nil:
		return contract.CauseFailed, fmt.Errorf("stopped: the runner was cancelled: %w", cause)
	case res != nil && res.Subtype == "error_max_turns":
		// the engine's own words first, the runner's limit beside them
		return contract.CauseMaxTurns, fmt.Errorf("%s\n(the runner's turn limit MR_MAX_TURNS=%d was reached: %d turns used)",
			nonEmpty(engineText(res), "error_max_turns"), r.cfg.MaxTurns, r.out.Turns)
	case res != nil && res.Subtype == "error_max_budget_usd":
		return contract.CauseBudget, fmt.Errorf("%s\n(the runner's cost budget MR_MAX_BUDGET_USD=%g was reached: $%.4f spent)",
			nonEmpty(engineText(res), "error_max_budget_usd"), r.cfg.MaxBudgetUSD, deref(res.TotalCostUSD))
	case engErr != nil && res != nil && res.IsError:
		return contract.CauseFailed, reported(res, engErr.Error())
	case engErr != nil:
		return contract.CauseCrash, engErr
	case res == nil:
		return contract.CauseCrash, errors.New("the engine ended without reporting a result")
	case res.IsError:
		return contract.CauseFailed, reported(res, nonEmpty(res.Text, "(no text)"))
	}
	return "", nil
}

// engineText is what the engine said about how it ended.
func engineText(res *session.Result) string {
	if t := strings.TrimSpace(strings.Join(res.Errors, "\n")); t != "" {
		return t
	}
	return strings.TrimSpace(res.Text)
}

// userTask is the trigger's task as the session shows it: the comment
// after the mention and its flags, sanitized, mentions neutralised.
func (r *run) userTask() string {
	if r.job == nil {
		return ""
	}
	return mention.Neutralize(sanitize.Text(r.job.Task))
}

// reported is an error result's text, naming its subtype unless it is the
// uninformative "success" Claude Code gives API errors.
func reported(res *session.Result, text string) error {
	if res.Subtype == "" || res.Subtype == "success" {
		return errors.New(text)
	}
	return fmt.Errorf("%s: %s", res.Subtype, text)
}

// workspacePath is the absolute path the engine works in.
func (r *run) workspacePath() (string, error) {
	wd := cmp.Or(r.cfg.Workspace, ".")
	abs, err := filepath.Abs(wd)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", wd, err)
	}
	return abs, nil
}

func (r *run) workDir() (string, error) {
	wd := cmp.Or(r.cfg.Workspace, ".")
	abs, err := r.workspacePath()
	if err != nil {
		return "", err
	}
	if r.cfg.TargetDir != "" {
		// checkoutTarget creates it, empty
		return abs, nil
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace %q (MR_WORKSPACE) is not a directory", wd)
	}
	// Without fetched code the workspace is plain files. A git checkout
	// there (the old agent job checked the target out itself) would bring
	// the target's .git/config — filter, hook, fsmonitor and credential
	// programs — to any git that runs in it: refused.
	if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
		return "", fmt.Errorf("workspace %q (MR_WORKSPACE) is a git checkout (it has .git); the agent job never works in a checkout it did not make itself: pass the fetch step's artifact as target-dir (MR_TARGET_DIR) and an empty workspace", wd)
	}
	return abs, nil
}

// checkoutTarget makes the working tree the agent works in. With a fetched
// target (MR_TARGET_DIR) it checks the pack out into workDir with the git
// directory kept outside it (and outside the run directory), so neither
// the target nor the agent can configure the git the gate runs; it returns
// the commit the context recorded. Without one, workDir is plain files:
// no git runs there and no pull request can be made from it.
func (r *run) checkoutTarget(ctx context.Context, workDir string, target *checkout.Target) (prbundle.Repo, string, error) {
	repo := prbundle.Repo{WorkTree: workDir}
	if r.cfg.TargetDir == "" {
		return repo, "", nil
	}
	gitParent, err := os.MkdirTemp("", "mr-target-git-")
	if err != nil {
		return repo, "", fmt.Errorf("checkout: %w", err)
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(gitParent) })
	repo.GitDir = filepath.Join(gitParent, "target.git")
	m, err := checkout.Unpack(ctx, r.cfg.TargetDir, workDir, repo.GitDir, *target)
	if err != nil {
		r.emit(contract.EventFileRejected, record.SeverityError, "the fetched code was refused: "+err.Error(),
			map[string]any{"path": r.cfg.TargetDir, "reason": err.Error()})
		return repo, "", err
	}
	*target = m.Target // with the default branch, if the context lacked it
	r.fetched = m
	r.emit(contract.EventCheckoutCompleted, record.SeverityInfo, fmt.Sprintf("checked out %s at %s (branch %s)", m.Repo, m.Commit, target.Branch()),
		map[string]any{"repo": m.Repo, "commit": m.Commit, "branch": target.Branch(), "pull_number": target.PullNumber,
			"default_base": target.StackedBase(), "pack_bytes": m.PackBytes, "workdir": workDir, "diff": m.Diff})
	return repo, m.Commit, nil
}

func (r *run) threadURL() string {
	kind := "issues"
	if r.job.IsPR {
		kind = "pull"
	}
	return fmt.Sprintf("%s/%s/%s/%d", r.cfg.ServerURL, r.job.Repo, kind, r.job.Number)
}

func (r *run) workflowRunURL() string {
	return contract.WorkflowRunURL(r.cfg.ServerURL, r.o.Getenv("GITHUB_REPOSITORY"), r.o.Getenv("GITHUB_RUN_ID"))
}

// emitConfig records the effective configuration: no secrets, and of the
// engine's environment only the names.
func (r *run) emitConfig(env, dropped []string) {
	names := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	c := r.cfg
	r.emit(contract.EventConfigLoaded, record.SeverityInfo, "configuration loaded", map[string]any{
		"bot": c.BotLogin, "control_repo": c.ControlRepo, "engine": c.Engine, "model": c.Model,
		"max_turns": c.MaxTurns, "timeout": c.Timeout.String(), "max_budget_usd": c.MaxBudgetUSD,
		"ceilings":       map[string]int{"comment_limit": c.CommentLimit, "issue_limit": c.IssueLimit, "pr_limit": c.PRLimit},
		"loop_threshold": c.LoopThreshold, "system_prompt_file": c.SystemPromptFile, "workspace": c.Workspace,
		"allow_workflow_changes": c.AllowWorkflowChanges, "max_bundle_bytes": c.MaxBundleBytes,
		"run_dir": c.RunDir, "context_file": c.ContextFile, "claude_bin": c.ClaudeBin,
		"codex_bin": c.CodexBin, "gemini_bin": c.GeminiBin,
		"engine_env": names, "engine_env_dropped": dropped,
	})
}

// canEdit reports whether the extra tools let the engine change files.
func canEdit(tools []string) bool {
	for _, t := range tools {
		name, _, _ := strings.Cut(strings.TrimSpace(t), "(")
		switch name {
		case "Edit", "Write", "MultiEdit", "NotebookEdit", "Bash":
			return true
		}
	}
	return false
}

func countMessages(s session.Session, role string) int {
	n := 0
	for _, t := range s.Turns {
		if t.Role == role {
			n++
		}
	}
	return n
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len([]rune(s)) > 200 {
		s = string([]rune(s)[:200]) + "…"
	}
	return s
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// deref is the value behind p, or 0 when the engine reported none.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
