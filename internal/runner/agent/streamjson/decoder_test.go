package streamjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/session"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func decodeAll(t testing.TB, d *Decoder) []session.Event {
	t.Helper()
	d.Now = func() time.Time { return fixedTime }
	var out []session.Event
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, ev)
	}
}

func decodeString(t testing.TB, s string) []session.Event {
	t.Helper()
	return decodeAll(t, NewDecoder(strings.NewReader(s)))
}

func realLogs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// TestRealLogsGolden decodes every captured log and compares with its golden.
func TestRealLogsGolden(t *testing.T) {
	for _, file := range realLogs(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			got, err := json.MarshalIndent(decodeAll(t, NewDecoder(f)), "", "  ")
			require.NoError(t, err)
			golden.CheckJSON(t, strings.TrimSuffix(file, ".jsonl")+".events.json", append(got, '\n'))
		})
	}
}

func readLog(t *testing.T, name string) []session.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return decodeString(t, string(b))
}

func kinds(evs []session.Event) []session.EventKind {
	out := make([]session.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// TestRealLogsMapping states the mapping rules on the real logs.
func TestRealLogsMapping(t *testing.T) {
	t.Run("gate success", func(t *testing.T) {
		evs := readLog(t, "gate_success.jsonl")
		require.Equal(t, []session.EventKind{
			session.EventInit, session.EventUnknown, // system/thinking_tokens
			session.EventThinking, session.EventText, session.EventToolUse,
			session.EventToolResult, session.EventText, session.EventResult,
		}, kinds(evs))
		init := evs[0].Init
		assert.Equal(t, "claude-opus-4-8[1m]", init.Model)
		assert.Equal(t, "/tmp/claudetest/work", init.CWD)
		assert.NotEmpty(t, init.SessionID)
		assert.Equal(t, []session.MCPServer{{Name: "gate", Status: "connected"}}, init.MCPServers)
		assert.Contains(t, init.Tools, "mcp__gate__noop")
		assert.Equal(t, "system/thinking_tokens", evs[1].Text)
		// One line per block; all carry the message's id and usage.
		for _, e := range evs[2:5] {
			assert.Equal(t, "msg_fake_001", e.MessageID)
			assert.Equal(t, &session.Usage{InputTokens: 100, OutputTokens: 1}, e.Usage)
		}
		assert.Equal(t, "The user wants a comment.", evs[2].Text)
		assert.Equal(t, "mcp__gate__add_comment", evs[4].ToolName)
		assert.JSONEq(t, `{"body":"hello from claude"}`, string(evs[4].Input))
		assert.Equal(t, "toolu_gate_1", evs[5].ToolCallID)
		assert.Equal(t, "comment queued as output #1", evs[5].Output) // array content flattened
		res := evs[7].Result
		assert.Equal(t, "success", res.Subtype)
		assert.Equal(t, 2, res.NumTurns)
		require.NotNil(t, res.TotalCostUSD)
		assert.InDelta(t, 0.0015, *res.TotalCostUSD, 1e-9)
	})
	t.Run("gate error", func(t *testing.T) {
		evs := readLog(t, "gate_error.jsonl")
		var tr session.Event
		for _, e := range evs {
			if e.Kind == session.EventToolResult {
				tr = e
			}
		}
		assert.True(t, tr.IsError)
		assert.Equal(t, "denied by policy: here-only allows comments on the current thread only", tr.Output) // string content
	})
	t.Run("max turns", func(t *testing.T) {
		evs := readLog(t, "max_turns.jsonl")
		res := evs[len(evs)-1]
		require.Equal(t, session.EventResult, res.Kind)
		assert.True(t, res.IsError)
		assert.Equal(t, "error_max_turns", res.Result.Subtype)
		assert.Equal(t, "Reached maximum number of turns (1)", res.Result.Text) // from errors[]
	})
	t.Run("denied bash", func(t *testing.T) {
		evs := readLog(t, "denied_bash.jsonl")
		res := evs[len(evs)-1].Result
		assert.Equal(t, []string{"Bash"}, res.PermissionDenials)
	})
	t.Run("api error", func(t *testing.T) {
		evs := readLog(t, "api_error.jsonl")
		res := evs[len(evs)-1]
		// Claude Code reports an API failure as subtype success with is_error.
		assert.Equal(t, "success", res.Result.Subtype)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Result.Text, "API Error: 500")
		text := evs[len(evs)-2]
		assert.Equal(t, session.EventText, text.Kind)
		assert.Equal(t, "<synthetic>", text.Model)
	})
	t.Run("failed mcp server", func(t *testing.T) {
		evs := readLog(t, "mcp_failed.jsonl")
		assert.Equal(t, []session.MCPServer{{Name: "gate", Status: "failed"}}, evs[0].Init.MCPServers)
	})
}

func TestDecoderEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, evs []session.Event)
	}{
		{"empty input", "", func(t *testing.T, evs []session.Event) { assert.Empty(t, evs) }},
		{"blank lines and CRLF", "\n\r\n  \n{\"type\":\"result\",\"subtype\":\"success\"}\r\n\n",
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, session.EventResult, evs[0].Kind)
			}},
		{"no trailing newline", `{"type":"result","subtype":"success","result":"done"}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, "done", evs[0].Result.Text)
			}},
		{"malformed JSON keeps the line as a JSON string", "{not json\n",
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, session.EventUnknown, evs[0].Kind)
				assert.JSONEq(t, `"{not json"`, string(evs[0].Raw))
				assert.Contains(t, evs[0].Text, "line 1: malformed JSON")
			}},
		{"unknown type kept raw", `{"type":"stream_event","event":{"type":"ping"}}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, session.EventUnknown, evs[0].Kind)
				assert.Equal(t, "stream_event", evs[0].Text)
				assert.JSONEq(t, `{"type":"stream_event","event":{"type":"ping"}}`, string(evs[0].Raw))
			}},
		{"non-object JSON", `[1,2]`, func(t *testing.T, evs []session.Event) {
			require.Len(t, evs, 1)
			assert.Equal(t, session.EventUnknown, evs[0].Kind)
		}},
		{"assistant without message", `{"type":"assistant"}`, func(t *testing.T, evs []session.Event) {
			require.Len(t, evs, 1)
			assert.Equal(t, session.EventUnknown, evs[0].Kind)
		}},
		{"assistant with several blocks and an unknown one",
			`{"type":"assistant","message":{"id":"m1","model":"x","content":[{"type":"text","text":"a"},{"type":"redacted_thinking","data":"zz"},{"type":"tool_use","id":"t1","name":"Read"}]}}`,
			func(t *testing.T, evs []session.Event) {
				require.Equal(t, []session.EventKind{session.EventText, session.EventUnknown, session.EventToolUse}, kinds(evs))
				assert.JSONEq(t, `{"type":"redacted_thinking","data":"zz"}`, string(evs[1].Raw))
				assert.Equal(t, "m1", evs[1].MessageID)
				assert.JSONEq(t, `{}`, string(evs[2].Input), "missing input becomes {}")
				assert.Nil(t, evs[0].Usage)
			}},
		{"assistant with empty content", `{"type":"assistant","message":{"id":"m1","content":[]}}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, session.EventUnknown, evs[0].Kind)
			}},
		{"user string content is user text", `{"type":"user","message":{"role":"user","content":"hi"}}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, session.EventUserText, evs[0].Kind)
				assert.Equal(t, "hi", evs[0].Text)
			}},
		{"tool result with mixed content",
			`{"type":"user","message":{"content":[{"type":"text","text":"note"},{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}]}}`,
			func(t *testing.T, evs []session.Event) {
				require.Equal(t, []session.EventKind{session.EventUserText, session.EventToolResult}, kinds(evs))
				assert.Equal(t, "a\n[image]\nb", evs[1].Output)
				assert.True(t, evs[1].IsError)
			}},
		{"tool result without content", `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, "", evs[0].Output)
			}},
		{"result with null cost and denials",
			`{"type":"result","subtype":"error_during_execution","is_error":true,"total_cost_usd":null,"permission_denials":[{"tool_name":"Bash"},{"tool_name":"Write"}],"errors":["boom","bang"]}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				r := evs[0].Result
				assert.Nil(t, r.TotalCostUSD)
				assert.Equal(t, []string{"Bash", "Write"}, r.PermissionDenials)
				assert.Equal(t, "boom\nbang", r.Text)
			}},
		{"wrong field types are unknown, not fatal", `{"type":"result","num_turns":"three"}`,
			func(t *testing.T, evs []session.Event) {
				require.Len(t, evs, 1)
				assert.Equal(t, session.EventUnknown, evs[0].Kind)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := decodeString(t, tt.input)
			for _, e := range evs {
				assert.Equal(t, fixedTime, e.Time)
				_, err := json.Marshal(e)
				assert.NoError(t, err, "every event must marshal")
			}
			tt.check(t, evs)
		})
	}
}

func TestDecoderSkipsLongLines(t *testing.T) {
	long := `{"type":"user","message":{"content":"` + strings.Repeat("x", 300<<10) + `"}}`
	exact := `{"type":"result","result":"` + strings.Repeat("y", 100) + `"}`
	tests := []struct {
		name    string
		maxLine int
		input   string
		want    []session.EventKind
	}{
		{"long line skipped, next line read", 1000, long + "\n" + exact + "\n",
			[]session.EventKind{session.EventUnknown, session.EventResult}},
		{"long last line without newline", 1000, exact + "\n" + long,
			[]session.EventKind{session.EventResult, session.EventUnknown}},
		{"line of exactly the limit is kept", len(exact), exact + "\r\n" + exact,
			[]session.EventKind{session.EventResult, session.EventResult}},
		{"one byte over the limit is skipped", len(exact) - 1, exact + "\n",
			[]session.EventKind{session.EventUnknown}},
		{"default limit keeps a long line", 0, long + "\n", []session.EventKind{session.EventUserText}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(tt.input))
			d.MaxLine = tt.maxLine
			evs := decodeAll(t, d)
			require.Equal(t, tt.want, kinds(evs))
			for _, e := range evs {
				if e.Kind == session.EventUnknown {
					assert.Contains(t, e.Text, "over the")
					var note struct{ Bytes, Line int }
					require.NoError(t, json.Unmarshal(e.Raw, &note))
					assert.Greater(t, note.Bytes, tt.maxLine)
					assert.Positive(t, note.Line)
				}
			}
		})
	}
}

type failingReader struct{ data io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if err == io.EOF {
		return n, errors.New("pipe broke")
	}
	return n, err
}

func TestDecoderReaderError(t *testing.T) {
	d := NewDecoder(&failingReader{strings.NewReader(`{"type":"result"}` + "\n" + `{"type":"result"}`)})
	_, err := d.Next()
	require.NoError(t, err)
	_, err = d.Next() // the partial last line is still delivered
	require.NoError(t, err)
	_, err = d.Next()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipe broke")
	assert.Contains(t, err.Error(), "stream-json line 2") // read along with the partial line 2
	_, err2 := d.Next()
	assert.Equal(t, err, err2, "errors are sticky")
}

// TestDecoderIncremental shows Next returns a line's events before the
// writer sends more (it would deadlock otherwise).
func TestDecoderIncremental(t *testing.T) {
	pr, pw := io.Pipe()
	d := NewDecoder(pr)
	checkIncremental(t, pw, d.Next)
	assert.Equal(t, 3, d.line)
}

// checkIncremental writes three lines to pw one at a time, each only after
// next returned the previous line's event, then closes pw: next must hand
// out each event without waiting for more input, then io.EOF.
func checkIncremental(t *testing.T, pw *io.PipeWriter, next func() (session.Event, error)) {
	t.Helper()
	lines := []string{
		`{"type":"system","subtype":"init","model":"m"}`,
		`{"type":"assistant","message":{"id":"a","content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"result","subtype":"success"}`,
	}
	want := []session.EventKind{session.EventInit, session.EventText, session.EventResult}
	for i, l := range lines {
		go func() { _, _ = io.WriteString(pw, l+"\n") }()
		ev, err := next()
		require.NoError(t, err)
		assert.Equal(t, want[i], ev.Kind)
	}
	require.NoError(t, pw.Close())
	_, err := next()
	assert.ErrorIs(t, err, io.EOF)
}

func FuzzDecoder(f *testing.F) {
	// Seed with each real line, plus one whole (short) session: small seeds
	// keep the fuzzer's minimisation quick.
	seen := map[string]bool{}
	for _, file := range realLogs(f) {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if k := string(l); len(l) > 0 && !seen[k] {
				seen[k] = true
				f.Add(l)
			}
		}
		if strings.HasSuffix(file, "max_turns.jsonl") {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "\n", "{", `{"type":"assistant","message":{"content":"x"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":{"a":1}}]}}`,
		`{"type":"result","permission_denials":[null,{"tool_name":1}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(bytes.NewReader(data))
		d.MaxLine = 512 // exercise skipping too
		d.Strict = len(data)%2 == 1
		for i := 0; ; i++ {
			ev, err := d.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var fe *FormatError
			if d.Strict && errors.As(err, &fe) {
				if fe.Line < 1 || fe.Line > bytes.Count(data, []byte("\n"))+1 {
					t.Fatalf("format error names line %d of a %d-line input", fe.Line, bytes.Count(data, []byte("\n"))+1)
				}
				if _, again := d.Next(); !errors.As(again, &fe) {
					t.Fatalf("the format error is not sticky: %v", again)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if _, err := json.Marshal(ev); err != nil {
				t.Fatalf("event %d does not marshal: %v", i, err)
			}
			if i > len(data)+1 {
				t.Fatalf("more events than bytes")
			}
		}
	})
}

func BenchmarkDecoder(b *testing.B) {
	var one []byte
	for _, file := range realLogs(b) {
		data, err := os.ReadFile(file)
		require.NoError(b, err)
		one = append(one, data...)
	}
	input := bytes.Repeat(one, (1<<20)/len(one)+1) // ~1 MiB of real output
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(input))
		d.Now = func() time.Time { return fixedTime }
		for {
			if _, err := d.Next(); err != nil {
				break
			}
		}
	}
}

// FuzzOneParse: decoding a line's content blocks in one parse gives the
// same events, strict errors included, as decoding them block by block
// (the line is decoded twice in a row, as a log repeats shapes).
func FuzzOneParse(f *testing.F) {
	for _, file := range realLogs(f) {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l, false)
		}
	}
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":null},null,{"type":"text","text":5}]}}`), true)
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"redacted_thinking"}]}} `), true)
	f.Add([]byte(`{"type":"assistant","type":null,"message":{"content":[]}}`), true)
	for _, l := range []string{
		`{"type":"assistant","model":5,"message":{"id":"m","content":[{"type":"text","text":"a"}]}}`,
		`{"Type":"assistant","message":{"id":"m","content":[{"type":"text","text":"a"}]}}`,
		`{"type":"assistant","message":{"ID":"m","Usage":{"Input_tokens":1},"content":[{"type":"text","text":"a"}]}}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1.5},"content":[{"type":"text","text":"a"}]}}`,
		`{"type":"assistant","message":{"id":"mA","content":[{"type":"text","text":"a"}]},"message":null}`,
		`{"type":"user","session_id":7,"message":{"content":"hi"}}`,
		`{"type":"user","error":"x","message":{"content":null}}`,
		` {"type" : "user" , "message" : { "content" : [ {"type":"tool_result","content":"a"b\"} ] } } `,
	} {
		f.Add([]byte(l), true)
		f.Add([]byte(l), false)
	}
	f.Fuzz(func(t *testing.T, line []byte, strict bool) {
		decode := func(general bool) string {
			generalOnly = general
			defer func() { generalOnly = false }()
			// twice: what the decoder reuses from line to line must not leak
			d := NewDecoder(bytes.NewReader(bytes.Join([][]byte{line, line}, []byte("\n"))))
			d.Strict = strict
			d.Now = func() time.Time { return fixedTime }
			var evs []session.Event
			for {
				ev, err := d.Next()
				if err != nil {
					if err == io.EOF {
						break
					}
					return "error: " + err.Error()
				}
				evs = append(evs, ev)
			}
			out, err := json.Marshal(evs)
			require.NoError(t, err)
			return string(out)
		}
		general := decode(true)
		assert.Equal(t, general, decode(false))
		if strict && len(bytes.TrimSpace(line)) > 0 && !bytes.ContainsAny(line, "\r\n") {
			// strict decoding refuses exactly the lines checkLine refuses
			assert.Equal(t, checkLine(line) != nil, strings.HasPrefix(general, "error: "), general)
		}
	})
}
