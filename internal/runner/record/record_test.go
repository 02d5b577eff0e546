package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	t0      = time.Date(2026, 4, 26, 10, 0, 0, 0, time.UTC)
	ghToken = "ghp_" + strings.Repeat("a1B2", 9)
	meta    = Meta{RunID: "run_1", SessionID: "sess_1", TaskID: "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"}
)

// clock is a fake now that advances 1 ms per call.
func clock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Millisecond)
	}
}

func open(t *testing.T, dir string) *Recorder {
	t.Helper()
	r, err := Open(dir, meta, clock())
	require.NoError(t, err)
	return r
}

func TestEmitConcurrentSequence(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				_, err := r.Emit("tool.started", "engine", SeverityInfo, "x", map[string]int{"g": g, "i": i})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, r.Close())
	evs, err := ReadEvents(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	require.Len(t, evs, 320)
	ids := map[string]bool{}
	for i, e := range evs {
		assert.Equal(t, int64(i+1), e.Sequence, "sequence is 1, 2, 3… in file order")
		assert.False(t, ids[e.EventID], "event ids are unique")
		ids[e.EventID] = true
	}
}

func TestEveryRequiredFieldWritten(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	_, err := r.Emit("run.created", "runner", SeverityInfo, "created", nil)
	require.NoError(t, err)
	id, err := r.Emit("tool.started", "engine", SeverityDebug, "Bash started", map[string]any{"n": 1}, Correlation("toolu_1"))
	require.NoError(t, err)
	_, err = r.Emit("tool.completed", "tool", SeverityInfo, "Bash completed", nil, Correlation("toolu_1"), Parent(id))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	data, err := os.ReadFile(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 3)
	for _, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		for _, k := range requiredKey {
			assert.Contains(t, m, k)
		}
		ts, err := time.Parse(time.RFC3339, m["timestamp"].(string))
		require.NoError(t, err)
		assert.Equal(t, time.UTC, ts.Location())
		assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, m["timestamp"])
	}
	assert.Contains(t, lines[0], `"data":{}`)
	assert.Contains(t, lines[2], `"correlation_id":"toolu_1","parent_event_id":"`+id+`"`)
	assert.NotContains(t, lines[0], "correlation_id", "optional fields are left out when empty")
}

func TestEmitRejects(t *testing.T) {
	r := open(t, t.TempDir())
	defer r.Close()
	cases := []struct {
		name, typ, actor, sev, summary string
		data                           any
	}{
		{"bad type", "Tool Started", "engine", SeverityInfo, "x", nil},
		{"no actor", "tool.started", "", SeverityInfo, "x", nil},
		{"bad severity", "tool.started", "engine", "fatal", "x", nil},
		{"no summary", "tool.started", "engine", SeverityInfo, "", nil},
		{"data not object", "tool.started", "engine", SeverityInfo, "x", []int{1}},
		{"data not encodable", "tool.started", "engine", SeverityInfo, "x", map[string]any{"f": func() {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.Emit(c.typ, c.actor, c.sev, c.summary, c.data)
			assert.Error(t, err)
		})
	}
	_, err := Open(t.TempDir(), Meta{RunID: "r"}, nil)
	assert.ErrorContains(t, err, "required")
}

func TestReopenContinuesSequence(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	for range 3 {
		_, err := r.Emit("run.started", "runner", SeverityInfo, "x", nil)
		require.NoError(t, err)
	}
	require.NoError(t, r.Close())
	_, err := r.Emit("run.started", "runner", SeverityInfo, "x", nil)
	assert.ErrorIs(t, err, ErrClosed)

	r = open(t, dir)
	_, err = r.Emit("run.completed", "runner", SeverityInfo, "resumed", nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	evs, err := ReadEvents(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	require.Len(t, evs, 4)
	assert.Equal(t, int64(4), evs[3].Sequence)

	_, err = Open(dir, Meta{RunID: "run_other", SessionID: "s", TaskID: "t"}, nil)
	assert.ErrorContains(t, err, "belongs to run")
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	for range 2 {
		_, err := r.Emit("run.started", "runner", SeverityInfo, "x", nil)
		require.NoError(t, err)
	}
	require.NoError(t, r.Close())
	path := filepath.Join(dir, contract.EventsFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"event_id":"evt_x","sequence":3,"run_`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	evs, torn, err := ScanEvents(path)
	require.NoError(t, err, "a torn last line is tolerated")
	assert.Len(t, evs, 2)
	require.NotNil(t, torn)
	assert.Equal(t, 3, torn.Line)

	r = open(t, dir) // drops the torn tail and says so
	_, err = r.Emit("run.completed", "runner", SeverityInfo, "done", nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	evs, torn, err = ScanEvents(path)
	require.NoError(t, err)
	assert.Nil(t, torn)
	require.Len(t, evs, 4)
	assert.Equal(t, "record.recovered", evs[2].Type)
	assert.Equal(t, SeverityWarning, evs[2].Severity)
	assert.Equal(t, int64(3), evs[2].Sequence)
}

func line(seq int, mod func(map[string]any)) string {
	m := map[string]any{"event_id": fmt.Sprintf("evt_%d", seq), "sequence": seq, "run_id": "r", "session_id": "s", "task_id": "t",
		"type": "run.started", "timestamp": "2026-04-26T10:00:00.000Z", "actor": "runner", "severity": "info", "summary": "x", "data": map[string]any{}}
	if mod != nil {
		mod(m)
	}
	b, _ := json.Marshal(m)
	return string(b) + "\n"
}

func TestReadEventsStrict(t *testing.T) {
	cases := []struct {
		name, content, err string
	}{
		{"missing field", line(1, func(m map[string]any) { delete(m, "actor") }), `missing required field "actor"`},
		{"bad severity", line(1, func(m map[string]any) { m["severity"] = "loud" }), "severity"},
		{"data not object", line(1, func(m map[string]any) { m["data"] = "x" }), "data is not an object"},
		{"bad id", line(1, func(m map[string]any) { m["event_id"] = "e1" }), "evt_"},
		{"bad timestamp", line(1, func(m map[string]any) { m["timestamp"] = "yesterday" }), "timestamp"},
		{"sequence repeats", line(1, nil) + line(1, nil), "does not follow"},
		{"sequence goes back", line(2, nil) + line(1, nil), "does not follow"},
		{"broken middle line", line(1, nil) + "{oops\n" + line(2, nil), "line 2"},
		{"blank line", line(1, nil) + "\n" + line(2, nil), "line 2"},
		{"complete last line that is invalid is no torn line", line(1, nil) + strings.TrimSuffix(line(1, nil), "\n"), "does not follow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), contract.EventsFile)
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
			_, err := ReadEvents(path)
			assert.ErrorContains(t, err, c.err)
		})
	}
	path := filepath.Join(t.TempDir(), contract.EventsFile)
	require.NoError(t, os.WriteFile(path, []byte(line(1, nil)+strings.TrimSuffix(line(3, nil), "\n")), 0o644))
	evs, err := ReadEvents(path)
	require.NoError(t, err, "a whole last line without its newline is fine")
	assert.Len(t, evs, 2)
}

func FuzzParseEvents(f *testing.F) {
	f.Add([]byte(line(1, nil) + line(2, nil)))
	f.Add([]byte(line(1, nil) + `{"event_id":"evt_`))
	f.Add([]byte("\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, torn, good, err := parseEvents(data)
		if err != nil {
			return
		}
		assert.LessOrEqual(t, good, len(data))
		if torn == nil {
			assert.Equal(t, len(data), good)
		}
		for i := 1; i < len(evs); i++ {
			assert.Greater(t, evs[i].Sequence, evs[i-1].Sequence)
		}
		for _, e := range evs {
			assert.NoError(t, e.validate())
		}
	})
}

func TestSecretsNeverReachDisk(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	_, err := r.Emit("tool.started", "engine", SeverityInfo, "using "+ghToken,
		map[string]any{"command": "echo\n" + ghToken, ghToken: []string{"x\t" + ghToken}})
	require.NoError(t, err)
	require.NoError(t, r.Tool(ToolRecord{ID: "c", Name: "Bash", Arguments: json.RawMessage(`{"env":"T=\n` + ghToken + `"}`), Status: "done", ResultExcerpt: ghToken}))
	require.NoError(t, r.Tool(ToolRecord{ID: "d", Name: "Bash", Arguments: json.RawMessage("not json " + ghToken), Status: "error"}))
	require.NoError(t, r.Error(ErrorRecord{Kind: "engine", Message: "auth failed for " + ghToken, Data: json.RawMessage(`{"k":"` + ghToken + `"}`)}))
	require.NoError(t, WriteMeta(dir, RunMeta{RunID: "run_1", Prompt: "token " + ghToken}))
	require.NoError(t, r.Close())
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.NotContains(t, string(data), "a1B2a1B2", p)
		return nil
	})
	require.NoError(t, err)
	_, err = ReadEvents(filepath.Join(dir, contract.EventsFile))
	assert.NoError(t, err, "redacted lines are still valid events")
}

func TestToolAndErrorRecords(t *testing.T) {
	dir := t.TempDir()
	r := open(t, dir)
	d := int64(12)
	require.NoError(t, r.Tool(ToolRecord{ID: "c1", Name: "Read", Arguments: json.RawMessage(`{"a":1}`), Status: "done", ResultExcerpt: "ok", DurationMS: &d}))
	assert.Error(t, r.Tool(ToolRecord{ID: "c2", Name: "Read", Status: "finished"}))
	assert.Error(t, r.Tool(ToolRecord{Name: "Read", Status: "done"}))
	require.NoError(t, r.Error(ErrorRecord{Kind: "limit", Message: "max turns", Recoverable: true}))
	assert.Error(t, r.Error(ErrorRecord{Kind: "x", Message: "y", Data: json.RawMessage(`[1]`)}))
	require.NoError(t, r.Close())

	tools, torn, err := ReadTools(filepath.Join(dir, contract.ToolsFile))
	require.NoError(t, err)
	assert.Nil(t, torn)
	require.Len(t, tools, 1)
	assert.Equal(t, `{"a":1}`, string(tools[0].Arguments))
	assert.Equal(t, int64(12), *tools[0].DurationMS)
	errs, _, err := ReadErrors(filepath.Join(dir, contract.ErrorsFile))
	require.NoError(t, err)
	require.Len(t, errs, 1)
	assert.Equal(t, "2026-04-26T10:00:00.001Z", errs[0].Timestamp)
	evs, err := ReadEvents(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "error", evs[0].Type)
	assert.Equal(t, SeverityWarning, evs[0].Severity, "recoverable errors are warnings")
}

func TestExcerpt(t *testing.T) {
	assert.Equal(t, "short", Excerpt("short"))
	long := strings.Repeat("é", ExcerptChars+10)
	got := Excerpt(long)
	assert.Equal(t, strings.Repeat("é", ExcerptChars)+"…", got)
	// a secret straddling the cut is redacted whole, not left half-visible
	s := strings.Repeat("x", ExcerptChars-10) + " " + ghToken
	assert.NotContains(t, Excerpt(s), "ghp_a1B2")
}

func TestResumeContinuesTheSequence(t *testing.T) {
	dir := t.TempDir()
	_, err := Resume(dir, nil)
	require.ErrorIs(t, err, ErrNoRecord)

	first, err := Open(dir, Meta{RunID: "7-1", SessionID: SessionID("job", "7-1"), TaskID: "job"}, nil)
	require.NoError(t, err)
	assert.False(t, first.Continued())
	_, err = first.Emit("run.created", "assemble", SeverityInfo, "created", nil)
	require.NoError(t, err)
	require.NoError(t, first.Close())

	later, err := Resume(dir, nil)
	require.NoError(t, err)
	assert.True(t, later.Continued())
	assert.Equal(t, first.meta, later.meta, "a later job writes under the same run, session and task")
	_, err = later.Emit("run.completed", "publish", SeverityInfo, "done", nil)
	require.NoError(t, err)
	require.NoError(t, later.Close())
	evs, err := ReadEvents(filepath.Join(dir, contract.EventsFile))
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, []int64{evs[0].Sequence, evs[1].Sequence})
	assert.True(t, strings.HasPrefix(evs[1].SessionID, "sess_"))
}
