package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

// TestScenarios tells every demo story and keeps its complete record as a
// golden file: the events (one line each), transcript.md, session.json,
// the log issue and every comment a person sees. Times, durations, ports,
// hashes and temporary paths are normalised; everything else must match.
func TestScenarios(t *testing.T) {
	t.Parallel()
	needBins(t)
	root, err := demo.ModuleRoot(".")
	require.NoError(t, err)
	for name, by := range foldedScenarios {
		_, ok := demo.FindScenario(name)
		require.True(t, ok, "scenario %s (told by %s) is not a demo scenario", name, by)
	}
	for _, sc := range demo.Scenarios {
		if foldedScenarios[sc.Name] != "" {
			continue // told by foldedScenarios[sc.Name]
		}
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
			defer cancel()
			res, err := demo.RunScenario(ctx, sc, demo.Options{Bins: bins, OutDir: out,
				ReplayScript: filepath.Join(root, "demo", "replay.jsonl"), Settings: settings(), DispatcherSettings: dispatcherSettings})
			require.NoError(t, err)
			defer res.World.Sim.Close()
			checkScenario(t, res, out)
		})
	}
}

// foldedScenarios are the demo stories another test tells with the same
// seed, script and settings, checking them through checkScenario on its
// own flow (each flow costs a dispatcher, runner and git processes).
var foldedScenarios = map[string]string{
	"default": "TestFlowSmall",
	"bad-cfg": "TestFlowBadFlagsDoesNotRun",
}

// scenarioOut is the output directory RunScenario gives a story's first
// comment's flow under out (the golden files name it OUT/comment-1).
func scenarioOut(out string) string { return filepath.Join(out, "comment-1") }

// checkScenario checks a told story against its Want (res.OK) and its
// golden file; out is the directory the golden files name OUT.
func checkScenario(t *testing.T, res *demo.Outcome, out string) {
	t.Helper()
	sc := res.Scenario
	var shown strings.Builder
	res.Show(&shown)
	require.True(t, res.OK(), "%s", shown.String())

	n := newNormaliser(res.World.BaseURL, out, bins)
	var g strings.Builder
	section := func(title, body string) {
		fmt.Fprintf(&g, "=== %s\n%s\n", title, strings.TrimRight(n.text(body), "\n"))
	}
	section("what a person sees", shown.String())
	if f := res.Flow; f != nil {
		dir := f.FinalRecordDir
		require.NotEmpty(t, dir)
		evs, err := record.ReadEvents(filepath.Join(dir, contract.EventsFile))
		require.NoError(t, err)
		var lines []string
		for _, e := range evs {
			lines = append(lines, fmt.Sprintf("%d %s %s %s: %s", e.Sequence, e.Actor, e.Severity, e.Type, e.Summary))
		}
		section("events.jsonl", strings.Join(lines, "\n"))
		checkEventSchema(t, filepath.Join(dir, contract.EventsFile))
		transcript, err := os.ReadFile(filepath.Join(dir, contract.TranscriptFile))
		require.NoError(t, err)
		section("transcript.md", string(transcript))
		sess, err := os.ReadFile(filepath.Join(dir, contract.SessionFile))
		require.NoError(t, err)
		section("session.json", n.json(t, sess))
	}
	golden.CheckString(t, filepath.Join("testdata", "scenario_"+sc.Name+".golden"), g.String())
}

// checkEventSchema validates events.jsonl line by line against the event
// shape of SPEC §5: every required field present with its JSON type,
// severity from its set, sequence strictly increasing from 1, and one
// run/session/task for the whole file.
func checkEventSchema(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	required := map[string]string{"event_id": "string", "sequence": "number", "run_id": "string", "session_id": "string",
		"task_id": "string", "type": "string", "timestamp": "string", "actor": "string", "severity": "string", "summary": "string", "data": "object"}
	optional := map[string]string{"correlation_id": "string", "parent_event_id": "string"}
	kind := func(v any) string {
		switch v.(type) {
		case string:
			return "string"
		case float64:
			return "number"
		case map[string]any:
			return "object"
		}
		return fmt.Sprintf("%T", v)
	}
	actors := map[string]bool{}
	var ids [3]string
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &e), "line %d", i+1)
		for k, want := range required {
			v, ok := e[k]
			require.True(t, ok, "line %d lacks %s", i+1, k)
			assert.Equal(t, want, kind(v), "line %d: %s", i+1, k)
		}
		for k := range e {
			if _, ok := required[k]; !ok {
				want, ok := optional[k]
				require.True(t, ok, "line %d: unknown field %s", i+1, k)
				assert.Equal(t, want, kind(e[k]), "line %d: %s", i+1, k)
			}
		}
		assert.Equal(t, float64(i+1), e["sequence"], "line %d: sequence runs 1, 2, 3… across the three jobs", i+1)
		assert.Contains(t, []string{"debug", "info", "warning", "error"}, e["severity"])
		assert.Regexp(t, `^evt_[0-9a-f]+$`, e["event_id"])
		assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, e["timestamp"])
		assert.Regexp(t, `^sess_`, e["session_id"])
		got := [3]string{e["run_id"].(string), e["session_id"].(string), e["task_id"].(string)}
		if i == 0 {
			ids = got
		}
		assert.Equal(t, ids, got, "line %d: one run, session and task", i+1)
		actors[e["actor"].(string)] = true
	}
	for _, a := range []string{"assemble", "runner", "publish"} {
		assert.True(t, actors[a], "no events of the %s job", a)
	}
}

// normaliser takes what changes from run to run out of a golden text.
type normaliser struct{ r *strings.Replacer }

func newNormaliser(baseURL, out string, b demo.Binaries) normaliser {
	return normaliser{r: strings.NewReplacer(strings.TrimSuffix(baseURL, "/"), "http://SIM", out, "OUT",
		filepath.Dir(b.Runner), "BIN")}
}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	{regexp.MustCompile(`[0-9a-f]{64}`), "SHA256"},
	// the simulator's first commit carries the time
	{regexp.MustCompile(`head [0-9a-f]{12}\b`), "head SHA"},
	{regexp.MustCompile(`(the commit|moved from|to|@)( ?)[0-9a-f]{12}\b`), "$1${2}SHA12"},
	{regexp.MustCompile(`\b[0-9a-f]{40}\b`), "SHA1"},
	{regexp.MustCompile(`(\*\*Duration:\*\*|- Duration:) [^·\n]*`), "$1 D "},
	{regexp.MustCompile(`· [0-9.]+ s\b`), "· N s"},
	{regexp.MustCompile(`\(took [^)]*\)|in [0-9.]+m?s;`), "(took T)"},
	{regexp.MustCompile(`\| (\d+) \| (\d+|–) \|\n`), "| MS | MS |\n"},
	{regexp.MustCompile(`"duration_ms": \d+`), `"duration_ms": 0`},
	{regexp.MustCompile(`prompt rendered \(\d+ bytes\)`), "prompt rendered (N bytes)"},
}

func (n normaliser) text(s string) string {
	s = n.r.Replace(s)
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

func (n normaliser) json(t *testing.T, data []byte) string {
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return n.text(string(b))
}
