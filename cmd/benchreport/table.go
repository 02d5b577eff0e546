package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/benchreport"
	"github.com/mention-runner/mention-runner/internal/cli"
)

// sections in table order; --only picks some.
var sections = []string{"transport", "render", "dispatch", "launch", "assemble"}

// renderLimitMiB is the issue-8 ceiling for rendering a 200 MB log.
const renderLimitMiB = 100

func init() {
	app.Register(&cli.Command{
		Name:    "table",
		Summary: "run the measurements and print the markdown table",
		Run:     runTable,
	})
}

type tableRun struct {
	ctx       context.Context
	env       *cli.Env
	renderMB  int
	launches  int
	runnerBin string
}

func runTable(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "benchreport", "table", "[--only a,b] [--render-mb N] [--launch-runs N]")
	only := fs.String("only", "", "comma-separated sections to measure: "+strings.Join(sections, ","))
	renderMB := fs.Int("render-mb", 200, "size of the generated stream-json log, in MB")
	launches := fs.Int("launch-runs", 7, "runner start-ups timed (the median is reported)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	want, err := pick(*only)
	if err != nil {
		return err
	}
	if *renderMB < 1 || *launches < 1 {
		return cli.Usagef("--render-mb and --launch-runs must be at least 1")
	}
	t := &tableRun{ctx: ctx, env: env, renderMB: *renderMB, launches: *launches}
	if want["render"] || want["launch"] {
		dir, err := os.MkdirTemp("", "benchreport-bin-")
		if err != nil {
			return fmt.Errorf("temp dir: %w", err)
		}
		defer os.RemoveAll(dir)
		t.runnerBin = filepath.Join(dir, "runner")
		bctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		out, err := exec.CommandContext(bctx, goBin(), "build", "-o", t.runnerBin, "./cmd/runner").CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("build runner (run benchreport from the repository root): %w: %s", err, tail(string(out), 800))
		}
	}
	var rows []benchreport.Row
	for _, s := range sections {
		if !want[s] {
			continue
		}
		fmt.Fprintf(env.Stderr, "benchreport: measuring %s…\n", s)
		rows = append(rows, t.section(s)...)
	}
	fmt.Fprint(env.Stdout, benchreport.Markdown(rows))
	for _, r := range rows {
		if strings.HasPrefix(r.Figure, "error:") {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s could not be measured", r.Name)}
		}
	}
	return nil
}

func pick(only string) (map[string]bool, error) {
	want := map[string]bool{}
	if only == "" {
		for _, s := range sections {
			want[s] = true
		}
		return want, nil
	}
	for _, s := range strings.Split(only, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(sections, s) {
			return nil, cli.Usagef("--only: unknown section %q (valid: %s)", s, strings.Join(sections, ", "))
		}
		want[s] = true
	}
	return want, nil
}

func (t *tableRun) section(s string) []benchreport.Row {
	switch s {
	case "transport":
		return t.transport()
	case "render":
		return t.render()
	case "dispatch":
		return t.dispatch()
	case "launch":
		return t.launch()
	case "assemble":
		return t.assemble()
	}
	return nil
}

func (t *tableRun) transport() []benchreport.Row {
	const name = "transport: encode + assemble, 10 MiB context"
	res, command, err := goBench(t.ctx, "./internal/transport", "^BenchmarkEncodeAssemble10MiB$")
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	b, ok := benchreport.Find(res, "BenchmarkEncodeAssemble10MiB")
	if !ok {
		return []benchreport.Row{benchreport.Failed(name, command, fmt.Errorf("benchmark result missing"))}
	}
	return []benchreport.Row{
		{Name: name, Figure: benchreport.Num(b.Metrics["MB/s"]), Unit: "MB/s", Command: command},
		{Name: "transport: allocated per 10 MiB round trip", Figure: benchreport.Num(b.Metrics["B/op"] / (1 << 20)), Unit: "MiB", Command: command},
	}
}

func (t *tableRun) assemble() []benchreport.Row {
	const name = "runner: assemble a 20-shard context (last shard run)"
	res, command, err := goBench(t.ctx, "./internal/assemble", "^BenchmarkAssemble20Shards$", "-benchtime", "5x")
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	b, ok := benchreport.Find(res, "BenchmarkAssemble20Shards")
	if !ok {
		return []benchreport.Row{benchreport.Failed(name, command, fmt.Errorf("benchmark result missing"))}
	}
	return []benchreport.Row{{Name: name, Figure: benchreport.Num(b.Metrics["ns/op"] / 1e6), Unit: "ms", Command: command}}
}

func (t *tableRun) render() []benchreport.Row {
	command := fmt.Sprintf("go run ./cmd/benchreport table --only render --render-mb %d", t.renderMB)
	name := fmt.Sprintf("transcript: runner render --from-stream, %d MB stream-json", t.renderMB)
	seed, err := loadSeed()
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	r, err := benchreport.RenderStream(t.ctx, t.runnerBin, seed, int64(t.renderMB)*1e6)
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	peak := benchreport.Num(r.MaxRSSMiB())
	if r.MaxRSSMiB() >= renderLimitMiB {
		peak += fmt.Sprintf(" (over the %d MiB limit)", renderLimitMiB)
	}
	return []benchreport.Row{
		{Name: name, Figure: benchreport.Num(r.MBps()), Unit: "MB/s", Command: command},
		{Name: "transcript: peak RSS of that render (child ru_maxrss)", Figure: peak, Unit: "MiB", Command: command},
	}
}

// loadSeed reads the real Claude Code logs the generated log is made of.
func loadSeed() (benchreport.StreamSeed, error) {
	files, err := filepath.Glob(filepath.Join("internal", "streamjson", "testdata", "*.jsonl"))
	if err != nil || len(files) == 0 {
		return benchreport.StreamSeed{}, fmt.Errorf("no stream-json logs under internal/streamjson/testdata (run from the repository root)")
	}
	var logs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return benchreport.StreamSeed{}, fmt.Errorf("read seed log: %w", err)
		}
		logs = append(logs, b)
	}
	return benchreport.ParseStreamSeed(logs...)
}

func (t *tableRun) launch() []benchreport.Row {
	command := fmt.Sprintf("go run ./cmd/benchreport table --only launch --launch-runs %d", t.launches)
	const name = "runner: process start → engine launch (runner agent, fake claude, median)"
	d, err := benchreport.EngineLaunch(t.ctx, t.runnerBin, t.launches)
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	return []benchreport.Row{{Name: name, Figure: benchreport.Num(float64(d) / 1e6), Unit: "ms", Command: command}}
}
