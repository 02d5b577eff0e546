package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
)

// sections in table order; --only picks some.
var sections = []string{"transport", "pipeline", "render", "dispatch", "launch", "assemble", "cost"}

// rounds is how many times ours and the floor alternate; medians are shown.
const rounds = 3

func init() {
	app.Register(&cli.Command{
		Name:    "table",
		Summary: "run the measurements and print the markdown table",
		Run:     runTable,
	})
}

type tableRun struct {
	ctx           context.Context
	env           *cli.Env
	renderMB      int
	launches      int
	runnerBin     string
	dispatcherBin string
	selfBin       string // this program, for the floor processes
}

func runTable(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "benchreport", "table", "[--only a,b] [--render-mb N] [--launch-runs N]")
	only := fs.String("only", "", "comma-separated sections to measure: "+strings.Join(sections, ","))
	defMB, err := envInt(env, "BENCH_RENDER_MB", 200)
	if err != nil {
		return err
	}
	renderMB := fs.Int("render-mb", defMB, "size of the stream-json log the render is timed on, in MB (default $BENCH_RENDER_MB, else 200)")
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
	if want["render"] || want["launch"] || want["pipeline"] {
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
		t.dispatcherBin = filepath.Join(dir, "dispatcher")
		bctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
		out, err = exec.CommandContext(bctx, goBin(), "build", "-o", t.dispatcherBin, "./cmd/dispatcher").CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("build dispatcher: %w: %s", err, tail(string(out), 800))
		}
		if t.selfBin, err = os.Executable(); err != nil {
			return fmt.Errorf("find own binary for the floor programs: %w", err)
		}
	}
	var rows []benchreport.Row
	var costTable string
	var costErr error
	for _, s := range sections {
		if !want[s] {
			continue
		}
		fmt.Fprintf(env.Stderr, "benchreport: measuring %s…\n", s)
		if s == "cost" {
			// a table of its own: one row per kind of mention
			costTable, costErr = t.cost()
			continue
		}
		rows = append(rows, t.section(s)...)
	}
	if len(rows) > 0 {
		fmt.Fprint(env.Stdout, benchreport.Markdown(rows))
	}
	fmt.Fprint(env.Stdout, costTable)
	for _, r := range rows {
		if strings.HasPrefix(r.Figure, "error:") {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s could not be measured", r.Name)}
		}
	}
	if costErr != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("the cost of a mention could not be measured (%s): %w", costCommand, costErr)}
	}
	return nil
}

// envInt is the integer in the environment variable name, def when it is
// unset; anything else there is a usage error, not a silent default.
func envInt(env *cli.Env, name string, def int) (int, error) {
	v := env.Env(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, cli.Usagef("%s=%q is not a whole number of MB", name, v)
	}
	return n, nil
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
	case "pipeline":
		return t.pipeline()
	case "render":
		return t.render()
	case "dispatch":
		return append(t.dispatch(), t.backlog()...)
	case "launch":
		return t.launch()
	case "assemble":
		return t.assemble()
	}
	return nil
}

func (t *tableRun) transport() []benchreport.Row {
	const name = "transport: encode + assemble, 10 MiB context"
	var ours, floor, alloc []float64
	var command string
	for range rounds {
		for _, b := range []string{"BenchmarkEncodeAssemble10MiB", "BenchmarkFloorEncodeAssemble10MiB"} {
			res, cmd, err := goBench(t.ctx, "./internal/core/transport", "^"+b+"$", "-benchtime", "10x")
			if err != nil {
				return []benchreport.Row{benchreport.Failed(name, cmd, err)}
			}
			r, ok := benchreport.Find(res, b)
			if !ok {
				return []benchreport.Row{benchreport.Failed(name, cmd, fmt.Errorf("benchmark result %s missing", b))}
			}
			if b == "BenchmarkFloorEncodeAssemble10MiB" {
				floor = append(floor, r.Metrics["MB/s"])
				continue
			}
			command = cmd
			ours = append(ours, r.Metrics["MB/s"])
			alloc = append(alloc, r.Metrics["B/op"]/(1<<20))
		}
	}
	command += " (floor: BenchmarkFloorEncodeAssemble10MiB, alternated)"
	return []benchreport.Row{
		benchreport.VersusFloor(name, "MB/s", command, median(ours), median(floor), benchreport.HigherIsBetter, 0.8),
		{Name: "transport: allocated per 10 MiB round trip", Figure: benchreport.Num(median(alloc)), Unit: "MiB", Command: command},
	}
}

// pipeline times `dispatcher encode | runner decode` on a 10 MiB context as
// whole processes, against a process doing the floor's work.
func (t *tableRun) pipeline() []benchreport.Row {
	const name = "transport: dispatcher encode | runner decode, 10 MiB, whole processes"
	const command = "go run ./cmd/benchreport table --only pipeline"
	f, err := os.CreateTemp("", "benchreport-context-*.json")
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	defer os.Remove(f.Name())
	_, err = f.Write(benchreport.ContextJSON(10 << 20))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	const maxBytes = "--max-bytes=16777216"
	var ours, floor []float64
	for range rounds {
		d, err := benchreport.Pipe(t.ctx, f.Name(),
			[]string{t.dispatcherBin, "encode", "--jobid", "7f1c8e2a-3b4d-5e6f-8a9b-0c1d2e3f4a5b", maxBytes},
			[]string{t.runnerBin, "decode", maxBytes})
		if err != nil {
			return []benchreport.Row{benchreport.Failed(name, command, err)}
		}
		ours = append(ours, d.Seconds())
		d, err = benchreport.Pipe(t.ctx, f.Name(), []string{t.selfBin, "floor", "transport"})
		if err != nil {
			return []benchreport.Row{benchreport.Failed(name, command, err)}
		}
		floor = append(floor, d.Seconds())
	}
	return []benchreport.Row{benchreport.VersusFloor(name, "s", command, median(ours), median(floor), benchreport.LowerIsBetter, 1.5)}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func (t *tableRun) assemble() []benchreport.Row {
	const name = "runner: assemble a 20-shard context (last shard run)"
	res, command, err := goBench(t.ctx, "./internal/runner/assemble", "^BenchmarkAssemble20Shards$", "-benchtime", "5x")
	if err != nil {
		return []benchreport.Row{benchreport.Failed(name, command, err)}
	}
	b, ok := benchreport.Find(res, "BenchmarkAssemble20Shards")
	if !ok {
		return []benchreport.Row{benchreport.Failed(name, command, fmt.Errorf("benchmark result missing"))}
	}
	rows := []benchreport.Row{{Name: name, Figure: benchreport.Num(b.Metrics["ns/op"] / 1e6), Unit: "ms", Command: command}}
	return append(rows, t.assembleRequests()...)
}

// assembleRequests reads assemble's request and round-trip counts from
// internal/runner/assemble's BenchmarkAssembleRequests (250 ms of latency on every
// request), with their goals.
func (t *tableRun) assembleRequests() []benchreport.Row {
	const bench = "BenchmarkAssembleRequests"
	res, command, err := goBench(t.ctx, "./internal/runner/assemble", "^"+bench+"$", "-benchtime", "3x")
	if err != nil {
		return []benchreport.Row{benchreport.Failed("assemble: requests", command, err)}
	}
	var rows []benchreport.Row
	for _, sub := range []struct {
		name, label        string
		maxReqs, maxRounds float64
	}{
		{"small", "agent_small run", 0, 3},
		{"shards20", "winner of 20 shards", 0, 8},
	} {
		b, ok := benchreport.Find(res, bench+"/"+sub.name)
		if !ok {
			rows = append(rows, benchreport.Failed("assemble: "+sub.label, command, fmt.Errorf("benchmark result %s missing", sub.name)))
			continue
		}
		rows = append(rows,
			countRow("assemble: requests per "+sub.label, "requests", command, b.Metrics["requests/run"], sub.maxReqs),
			countRow("assemble: sequential round trips per "+sub.label, "round trips", command, b.Metrics["roundtrips/run"], sub.maxRounds))
	}
	return rows
}

// peakSizes are the log sizes (MB) whose peak memory make bench shows:
// the peak must stay under peakGoalMiB and flat in the log's size.
var peakSizes = []int{20, 100, 200}

const (
	peakGoalMiB = 32
	// flatGoal bounds peak(largest log) / peak(smallest log).
	flatGoal = 1.25
)

// render times `runner render --from-stream` against the floor on the
// same log, alternating, and measures its peak memory at every size in
// peakSizes. Each log is written once.
func (t *tableRun) render() []benchreport.Row {
	command := fmt.Sprintf("go run ./cmd/benchreport table --only render --render-mb %d", t.renderMB)
	name := fmt.Sprintf("transcript: runner render --from-stream, %d MB stream-json, wall time", t.renderMB)
	fail := func(err error) []benchreport.Row { return []benchreport.Row{benchreport.Failed(name, command, err)} }
	seed, err := loadSeed()
	if err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "benchreport-logs-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	type log struct {
		path string
		size int64
	}
	logs := map[int]log{}
	for _, mb := range append([]int{t.renderMB}, peakSizes...) {
		if _, ok := logs[mb]; ok {
			continue
		}
		path, n, err := benchreport.WriteStreamFile(dir, seed, int64(mb)*1e6)
		if err != nil {
			return fail(err)
		}
		logs[mb] = log{path, n}
	}
	main := logs[t.renderMB]
	var ours, floor, oursCPU, floorCPU []float64
	var mbps float64
	peak := map[int]float64{}
	for range rounds {
		r, err := benchreport.RenderFile(t.ctx, t.selfBin, t.runnerBin, main.path, main.size)
		if err != nil {
			return fail(err)
		}
		f, err := benchreport.FloorFile(t.ctx, t.selfBin, t.selfBin, main.path, main.size)
		if err != nil {
			return fail(err)
		}
		ours, floor = append(ours, r.Wall.Seconds()), append(floor, f.Wall.Seconds())
		oursCPU, floorCPU = append(oursCPU, r.CPU.Seconds()), append(floorCPU, f.CPU.Seconds())
		mbps = max(mbps, r.MBps())
		peak[t.renderMB] = max(peak[t.renderMB], r.MaxRSSMiB())
	}
	floorNote := " (floor: encoding/json.Valid on every line, alternated)"
	rows := []benchreport.Row{
		benchreport.VersusFloor(name, "s", command+floorNote, median(ours), median(floor), benchreport.LowerIsBetter, 1.5),
		benchreport.VersusFloor("transcript: the same, CPU time (user + system; steadier on a busy machine)",
			"s", command+floorNote, median(oursCPU), median(floorCPU), benchreport.LowerIsBetter, 1.5),
		{Name: "transcript: render throughput (best round)", Figure: benchreport.Num(mbps), Unit: "MB/s", Command: command},
	}
	for _, mb := range peakSizes {
		if _, ok := peak[mb]; !ok {
			r, err := benchreport.RenderFile(t.ctx, t.selfBin, t.runnerBin, logs[mb].path, logs[mb].size)
			if err != nil {
				rows = append(rows, benchreport.Failed(fmt.Sprintf("transcript: peak RSS rendering %d MB", mb), command, err))
				continue
			}
			peak[mb] = r.MaxRSSMiB()
		}
		rows = append(rows, benchreport.WithinLimit(fmt.Sprintf("transcript: peak RSS rendering %d MB", mb),
			"MiB", command, peak[mb], benchreport.LowerIsBetter, peakGoalMiB))
	}
	small, large := peakSizes[0], peakSizes[len(peakSizes)-1]
	if peak[small] > 0 && peak[large] > 0 {
		rows = append(rows, benchreport.WithinLimit(fmt.Sprintf("transcript: peak RSS flat in log size (%d MB ÷ %d MB)", large, small),
			"×", command, peak[large]/peak[small], benchreport.LowerIsBetter, flatGoal))
	}
	return rows
}

// loadSeed reads the real Claude Code logs the generated log is made of.
func loadSeed() (benchreport.StreamSeed, error) {
	files, err := filepath.Glob(filepath.Join("internal", "runner", "agent", "streamjson", "testdata", "*.jsonl"))
	if err != nil || len(files) == 0 {
		return benchreport.StreamSeed{}, fmt.Errorf("no stream-json logs under internal/runner/agent/streamjson/testdata (run from the repository root)")
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
