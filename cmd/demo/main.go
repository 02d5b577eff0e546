// Command demo runs one mention end to end on a simulated GitHub: the
// dispatcher and the three runner jobs as separate processes with separate
// environments, then prints what happened. `make demo` runs it.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// demoTimeout bounds the whole demo; the replay engine needs a few seconds.
const demoTimeout = 10 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cli.OSEnv(), os.Args[1:])
	stop()
	os.Exit(exitCode(err))
}

func exitCode(err error) int {
	var ue *cli.UsageError
	var ee *cli.ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "demo: %s\nRun 'go run ./cmd/demo --help' for usage.\n", ue.Msg)
		return 2
	case errors.As(err, &ee):
		if ee.Err != nil {
			fmt.Fprintf(os.Stderr, "demo: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(os.Stderr, "demo: %v\n", err)
	return 1
}

func run(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "demo", "", "[--comment TEXT] [--shard] [--engine replay|claude|codex|gemini] [--out DIR]")
	comment := fs.String("comment", env.Env("COMMENT"), "the trigger comment (env COMMENT); \\n is a line break; default: "+strings.ReplaceAll(demo.DefaultComment, "\n", `\n`))
	shard := fs.Bool("shard", env.Env("SHARD") == "1", "pad the thread so the context is sent as agent_shard events (env SHARD=1)")
	engine := fs.String("engine", envOr(env, "ENGINE", demo.EngineReplay), "agent engine: replay (scripted, offline), or claude, codex or gemini: the real CLI against a fake model API on loopback playing --script, or the real API when ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY is set (env ENGINE)")
	script := fs.String("script", "demo/replay.jsonl", "replay engine: the scripted session")
	claudeBin := fs.String("claude-bin", envOr(env, "CLAUDE_BIN", "tools/claude-code/node_modules/.bin/claude"), "claude engine: the Claude Code executable (env CLAUDE_BIN)")
	codexBin := fs.String("codex-bin", envOr(env, "CODEX_BIN", "tools/codex/node_modules/.bin/codex"), "codex engine: the Codex executable (env CODEX_BIN)")
	geminiBin := fs.String("gemini-bin", envOr(env, "GEMINI_BIN", "tools/gemini-cli/node_modules/.bin/gemini"), "gemini engine: the Gemini CLI executable (env GEMINI_BIN)")
	scenario := fs.String("scenario", env.Env("SCENARIO"), "tell one story instead of one comment: "+strings.Join(demo.ScenarioNames(), ", ")+", or all (env SCENARIO); exit 0 when it behaved as intended")
	out := fs.String("out", "demo-out", "where the jobs' directories and artifacts go (emptied first)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := demo.ModuleRoot(wd)
	if err != nil {
		return err
	}
	var scenarios []demo.Scenario
	switch *scenario {
	case "":
	case "all":
		scenarios = demo.Scenarios
	default:
		sc, ok := demo.FindScenario(*scenario)
		if !ok {
			return cli.Usagef("--scenario %q: want one of %s, or all", *scenario, strings.Join(demo.ScenarioNames(), ", "))
		}
		scenarios = []demo.Scenario{sc}
	}
	if len(scenarios) > 0 && *engine != demo.EngineReplay {
		return cli.Usagef("--scenario scripts the agent: it runs with the replay engine only")
	}
	o := demo.Options{Engine: *engine, Log: env.Stderr}
	switch *engine {
	case demo.EngineReplay:
		o.ReplayScript = inRoot(root, *script)
	case demo.EngineClaude, demo.EngineCodex, demo.EngineGemini:
		bin, keyName, makeTarget := inRoot(root, *claudeBin), "ANTHROPIC_API_KEY", "claude-code"
		switch *engine {
		case demo.EngineCodex:
			bin, keyName, makeTarget = inRoot(root, *codexBin), "OPENAI_API_KEY", "codex"
		case demo.EngineGemini:
			bin, keyName, makeTarget = inRoot(root, *geminiBin), "GEMINI_API_KEY", "gemini-cli"
		}
		if _, err := os.Stat(bin); err != nil {
			return cli.Usagef("%s not found at %s: run `make %s`", *engine, bin, makeTarget)
		}
		o.ClaudeBin, o.CodexBin, o.GeminiBin = bin, bin, bin
		if key := env.Env(keyName); key != "" {
			o.EngineEnv = []string{keyName + "=" + key}
			if *engine == demo.EngineClaude {
				for _, k := range []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL"} {
					if v := env.Env(k); v != "" {
						o.EngineEnv = append(o.EngineEnv, k+"="+v)
					}
				}
			}
			if m := env.Env("MR_MODEL"); m != "" {
				o.Settings = append(o.Settings, "MR_MODEL="+m)
			}
		} else {
			fake, err := demo.StartFakeAPI(*engine, inRoot(root, *script))
			if err != nil {
				return err
			}
			defer fake.Close()
			fmt.Fprintf(env.Stderr, "%s is not set: %s talks to a fake model API on loopback that plays %s\n", keyName, *engine, *script)
			o.EngineEnv = fake.EngineEnv
		}
	default:
		return cli.Usagef("--engine %q: want replay, claude, codex or gemini", *engine)
	}
	o.OutDir = inRoot(root, *out)
	if err := resetOut(o.OutDir); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	start := time.Now()
	binDir, err := os.MkdirTemp("", "mention-runner-demo-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	fmt.Fprintln(env.Stderr, "building cmd/dispatcher and cmd/runner …")
	if o.Bins, err = demo.Build(ctx, root, binDir); err != nil {
		return err
	}
	if len(scenarios) > 0 {
		return runScenarios(ctx, env, o, scenarios, start)
	}
	text := strings.ReplaceAll(*comment, `\n`, "\n")
	if strings.TrimSpace(text) == "" {
		text = demo.DefaultComment
	}
	world, err := demo.Seed(demo.SeedOptions{Comment: text, Shard: *shard})
	if err != nil {
		return err
	}
	defer world.Sim.Close()
	o.World = world
	fmt.Fprintf(env.Stderr, "simulated GitHub at %s; %s commented on %s:\n%s\n\n", world.BaseURL, demo.Author, world.ThreadURL(), indent(text))

	flow, err := demo.New(o)
	if err != nil {
		return err
	}
	runErr := flow.Run(ctx)
	if errors.Is(runErr, demo.ErrNoDispatch) && printReplies(env, world) > 0 {
		runErr = nil // the bot answered instead of running: the demo showed what happens
	}
	if len(flow.Dispatches()) > 0 {
		sum, err := flow.Summarize()
		if err != nil {
			fmt.Fprintf(env.Stderr, "demo: reading the run record: %v\n", err)
		}
		sum.Write(env.Stdout)
	}
	fmt.Fprintf(env.Stdout, "\njobs and artifacts: %s (took %s)\n", o.OutDir, time.Since(start).Round(100*time.Millisecond))
	return runErr
}

// runScenarios tells each story on its own simulator (a few at a time:
// they share nothing), prints them in order, and fails unless every one
// behaved as intended.
func runScenarios(ctx context.Context, env *cli.Env, o demo.Options, scenarios []demo.Scenario, start time.Time) error {
	base := o.OutDir
	// pacing between writes is for GitHub's limits; the stories do not need it
	o.Settings = append(o.Settings, "MR_WRITE_GAP=0s")
	o.DispatcherSettings = append(o.DispatcherSettings, "WRITE_GAP=0s")
	type told struct {
		out bytes.Buffer
		ok  bool
	}
	results := make([]told, len(scenarios))
	sem := make(chan struct{}, scenarioParallelism)
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			so := o
			so.OutDir = filepath.Join(base, sc.Name)
			fmt.Fprintf(env.Stderr, "scenario %s: %s\n", sc.Name, sc.About)
			res, err := demo.RunScenario(ctx, sc, so)
			if res != nil && res.World != nil {
				res.Show(&results[i].out)
				res.World.Sim.Close()
			}
			if err != nil {
				fmt.Fprintf(&results[i].out, "scenario %s could not run: %v\n", sc.Name, err)
				return
			}
			results[i].ok = res.OK()
		}()
	}
	wg.Wait()
	var failed []string
	for i, sc := range scenarios {
		env.Stdout.Write(results[i].out.Bytes())
		if !results[i].ok {
			failed = append(failed, sc.Name)
		}
	}
	fmt.Fprintf(env.Stdout, "\n%d scenario(s) in %s; jobs and artifacts: %s\n", len(scenarios), time.Since(start).Round(100*time.Millisecond), base)
	if len(failed) > 0 {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("not as intended: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// scenarioParallelism bounds the stories told at once.
const scenarioParallelism = 4

// printReplies shows what the bot answered on the thread instead of
// running, and returns how many replies there were.
func printReplies(env *cli.Env, w *demo.World) int {
	fmt.Fprintln(env.Stdout, "\n== No run: the dispatcher's answer on the thread ==")
	n := 0
	for _, c := range w.Sim.Comments(demo.TargetRepo, w.Issue) {
		if strings.EqualFold(c.GetUser().GetLogin(), demo.BotLogin) {
			fmt.Fprintf(env.Stdout, "%s\n%s\n", c.GetHTMLURL(), strings.TrimSpace(c.GetBody()))
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(env.Stdout, "(none: the mention was ignored; see demo-out/jobs/dispatcher/stderr.log)")
	}
	return n
}

// outMarker marks a directory the demo made, so only such a one is emptied.
const outMarker = ".mention-runner-demo"

func resetOut(dir string) error {
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(dir, outMarker)); err != nil {
			return cli.Usagef("--out %s is not empty and was not made by the demo; choose another directory", dir)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("empty %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, outMarker), nil, 0o644)
}

func envOr(env *cli.Env, key, def string) string {
	if v := env.Env(key); v != "" {
		return v
	}
	return def
}

func inRoot(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
