package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/testrig/actionwiring"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// Engines the agent job can run.
const (
	EngineReplay = "replay"
	EngineClaude = "claude"
	EngineCodex  = "codex"
	EngineGemini = "gemini"
)

// DefaultStageTimeout bounds one job process. It is there to stop a hung
// process, not to time one: on a busy 2-core machine (load 30) a real
// engine's agent job took over 2 minutes, and the engine's own timeout
// (3 minutes in the e2e flows) must fire before this one does.
const DefaultStageTimeout = 10 * time.Minute

// firstRunID numbers the simulated workflow runs (GITHUB_RUN_ID).
const firstRunID = 7001

// Options configure a flow.
type Options struct {
	World  *World
	Bins   Binaries
	OutDir string // jobs/ and artifacts/ go here; they must not exist yet

	Engine       string // EngineReplay (default), EngineClaude, EngineCodex or EngineGemini
	ReplayScript string // replay engine: the script file
	ClaudeBin    string // claude engine: the executable
	CodexBin     string // codex engine: the executable
	GeminiBin    string // gemini engine: the executable
	// EngineEnv is added to the agent job's environment: the model API
	// settings (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL…). Never a GitHub token.
	EngineEnv []string
	// Settings are extra runner settings for every runner job (MR_*=…).
	Settings []string
	// DispatcherSettings are extra dispatcher settings (WRITE_GAP=0s…).
	DispatcherSettings []string

	// Root is the repository whose agent-run.yml and action.yml say which
	// token each job gets ("" = the module root above the working directory).
	Root string

	// ParallelShards runs the assemble jobs of a sharded dispatch at the
	// same time, as GitHub does; otherwise one after another.
	ParallelShards bool
	StageTimeout   time.Duration // 0 = DefaultStageTimeout
	Log            io.Writer     // one progress line per job; nil = silent
}

// Flow runs one mention through the dispatcher and the runner jobs,
// each a separate process with its own environment and directory; files
// pass between jobs only through copied "artifacts".
type Flow struct {
	o      Options
	w      *World
	tokens map[string][]string // stage → its token variables, as the workflow wires them
	wiring *actionwiring.Wiring
	art    *artifactStore // the workflow run's artifacts

	mu         sync.Mutex
	dispatches []githubsim.Dispatch // as the simulator accepted them
	round      int                  // deliveries of the dispatches so far, minus one
	attempt    int                  // GITHUB_RUN_ATTEMPT of the run's next jobs; 0 = 1
	// dispatchedBefore are the control repo's dispatches from earlier
	// flows on the same world (a scenario's earlier comments)
	dispatchedBefore int
	// controlID and controlOwnerID are the control repo's ids, which
	// Actions gives its jobs (GITHUB_REPOSITORY_ID, ..._OWNER_ID)
	controlID, controlOwnerID int64

	prepareAttempt int // the attempt the proceeding prepare job ran in
	agentAttempt   int // the attempt the agent job last ran in
	publishedIn    int // the attempt publish last ran in

	Dispatcher *Stage
	Assembles  []*Stage // the prepare jobs' assemble steps, one per dispatch, in dispatch order
	Ready      *Stage   // the assemble run that proceeded
	Fetched    *Stage   // its prepare job's fetch step
	Agent      *Stage
	Publishes  []*Stage // every publish run (re-runs included)

	RunID       string // GITHUB_RUN_ID of the workflow run that proceeded
	JobID       string
	LogIssue    int
	ContextSHA  string
	RecordDir   string // the run record as uploaded by the agent job
	ContextDir  string // the prepare job's context artifact
	TargetDir   string // the prepare job's target artifact
	AgentRunDir string // the run record inside the agent job
	// FinalRecordDir is the complete record as the last publish uploaded it.
	FinalRecordDir string
}

// New prepares a flow; it registers the dispatch hook on the simulator.
func New(o Options) (*Flow, error) {
	if o.World == nil {
		return nil, errors.New("demo: Options.World is required")
	}
	if o.Engine == "" {
		o.Engine = EngineReplay
	}
	switch o.Engine {
	case EngineReplay:
		if o.ReplayScript == "" {
			return nil, errors.New("demo: the replay engine needs a script (Options.ReplayScript)")
		}
	case EngineClaude:
		if o.ClaudeBin == "" {
			return nil, errors.New("demo: the claude engine needs the Claude Code executable (Options.ClaudeBin)")
		}
	case EngineCodex:
		if o.CodexBin == "" {
			return nil, errors.New("demo: the codex engine needs the Codex executable (Options.CodexBin)")
		}
	case EngineGemini:
		if o.GeminiBin == "" {
			return nil, errors.New("demo: the gemini engine needs the Gemini CLI executable (Options.GeminiBin)")
		}
	default:
		return nil, fmt.Errorf("demo: unknown engine %q (want %s, %s, %s or %s)", o.Engine, EngineReplay, EngineClaude, EngineCodex, EngineGemini)
	}
	if o.StageTimeout <= 0 {
		o.StageTimeout = DefaultStageTimeout
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	out, err := filepath.Abs(o.OutDir)
	if err != nil {
		return nil, fmt.Errorf("demo: out dir: %w", err)
	}
	o.OutDir = out
	if o.ReplayScript != "" {
		if o.ReplayScript, err = filepath.Abs(o.ReplayScript); err != nil {
			return nil, fmt.Errorf("demo: replay script: %w", err)
		}
	}
	for _, sub := range []string{"jobs", "artifacts"} {
		if _, err := os.Stat(filepath.Join(out, sub)); err == nil {
			return nil, fmt.Errorf("demo: %s already holds a flow's %s; use a fresh directory", out, sub)
		}
	}
	root := o.Root
	if root == "" {
		if root, err = ModuleRoot("."); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	tokens, err := stageTokens(root)
	if err != nil {
		return nil, err
	}
	wiring, err := actionwiring.Load(root)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	f := &Flow{o: o, w: o.World, tokens: tokens, wiring: wiring, art: newArtifactStore(filepath.Join(out, "artifacts")),
		dispatchedBefore: len(o.World.Sim.Dispatches(ControlRepo))}
	if f.controlID, f.controlOwnerID, err = o.World.Sim.RepoIDs(ControlRepo); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	o.World.Sim.OnDispatch(func(repo string, d githubsim.Dispatch) {
		if repo != ControlRepo {
			return
		}
		f.mu.Lock()
		f.dispatches = append(f.dispatches, d)
		f.mu.Unlock()
	})
	return f, nil
}

// Dispatches are the repository_dispatch events the dispatcher sent.
func (f *Flow) Dispatches() []githubsim.Dispatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]githubsim.Dispatch(nil), f.dispatches...)
}

// Stages lists every process run so far, in order.
func (f *Flow) Stages() []*Stage {
	var out []*Stage
	if f.Dispatcher != nil {
		out = append(out, f.Dispatcher)
	}
	for _, st := range f.Assembles {
		if st != nil {
			out = append(out, st)
		}
	}
	if f.Fetched != nil {
		out = append(out, f.Fetched)
	}
	if f.Agent != nil {
		out = append(out, f.Agent)
	}
	return append(out, f.Publishes...)
}

// Run is the whole flow: dispatch, the prepare job per event (assemble,
// and fetch in the run that proceeds), agent, publish.
// Like the workflow, publish runs even when the agent job failed.
func (f *Flow) Run(ctx context.Context) error {
	if err := f.Dispatch(ctx); err != nil {
		return err
	}
	if err := f.AssembleAll(ctx); err != nil {
		return err
	}
	// RunAgent runs the prepare job's fetch step first, as the workflow's
	// agent job needs it; publish runs either way and reports what happened.
	agentErr := f.RunAgent(ctx)
	if _, err := f.Publish(ctx); err != nil {
		return errors.Join(agentErr, err)
	}
	return agentErr
}

// stageTokens reads which token each runner job gets from agent-run.yml and
// action.yml: the workflow's own token (github.token) is ControlToken, the
// BOT_TOKEN secret is BotToken. So the flow runs with the tokens the real
// workflow hands out, not with a copy of them. The answer is kept per root
// for the process: the two files do not change while it runs, and a test
// binary builds dozens of flows (each read and evaluated them again).
func stageTokens(root string) (map[string][]string, error) {
	if root == "" {
		var err error
		if root, err = ModuleRoot("."); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	if v, ok := stageTokensByRoot.Load(root); ok {
		return maps.Clone(v.(map[string][]string)), nil
	}
	out, err := readStageTokens(root)
	if err != nil {
		return nil, err
	}
	stageTokensByRoot.Store(root, out)
	return maps.Clone(out), nil
}

var stageTokensByRoot sync.Map // module root → job → tokens (never modified once stored)

func readStageTokens(root string) (map[string][]string, error) {
	w, err := actionwiring.Load(root)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	call := actionwiring.Call{
		With:    map[string]string{"bot-login": BotLogin, "runner-ref": "demo"},
		Secrets: map[string]string{"BOT_TOKEN": BotToken},
		GitHub:  map[string]string{"token": ControlToken, "repository": ControlRepo},
	}
	out := map[string][]string{}
	for _, stage := range []string{"assemble", "fetch", "agent", "publish"} {
		env, err := w.StageEnv(stage, call)
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		out[stage] = actionwiring.Tokens(env)
	}
	return out, nil
}

// jobDir makes a fresh working directory for one job.
func (f *Flow) jobDir(name string) (string, error) {
	dir := filepath.Join(f.o.OutDir, "jobs", name)
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o755); err != nil {
		return "", fmt.Errorf("job dir: %w", err)
	}
	return dir, nil
}

// baseEnv is what every job of the control repo's workflow sees on a fresh
// runner: the Actions variables and the runner's settings. No token.
func (f *Flow) baseEnv(dir, job, runID string, attempt int) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
		"CI=true",
		"GITHUB_ACTIONS=true",
		"GITHUB_JOB=" + job,
		"GITHUB_WORKSPACE=" + dir,
		"GITHUB_REPOSITORY=" + ControlRepo,
		"GITHUB_REPOSITORY_ID=" + strconv.FormatInt(f.controlID, 10),
		"GITHUB_REPOSITORY_OWNER_ID=" + strconv.FormatInt(f.controlOwnerID, 10),
		"GITHUB_EVENT_NAME=repository_dispatch",
		"GITHUB_RUN_ID=" + runID,
		"GITHUB_RUN_ATTEMPT=" + strconv.Itoa(attempt),
		"GITHUB_SERVER_URL=" + f.w.ServerURL(),
		"GITHUB_API_URL=" + f.w.ServerURL(),
		"RUNNER_TEMP=" + filepath.Join(dir, "home"),
		"BOT_LOGIN=" + BotLogin,
		"CONTROL_REPO=" + ControlRepo,
		"MR_ENGINE=" + f.o.Engine,
		"MR_RUN_DIR=runs",
	}
	return append(env, f.o.Settings...)
}

func (f *Flow) logf(format string, a ...any) {
	fmt.Fprintf(f.o.Log, format+"\n", a...)
}

// JobsRun lists the workflow jobs the flow has run so far (each a
// directory under jobs/, named <run id>-<job>[-<attempt>]), the dispatcher
// left out, sorted.
func (f *Flow) JobsRun() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(f.o.OutDir, "jobs"))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && e.Name() != "dispatcher" {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
