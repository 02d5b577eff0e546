package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encoderLines is what WriteCompact must write: json.Encoder's lines for
// Encode's requests of json.Compact's bytes.
func encoderLines(t testing.TB, jobID string, in []byte, ts time.Time) ([]byte, error) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, in); err != nil {
		return nil, err
	}
	reqs, err := Encode(jobID, compact.Bytes(), ts)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for _, r := range reqs {
		require.NoError(t, enc.Encode(r))
	}
	return out.Bytes(), nil
}

// writes records each Write call separately.
type writes struct{ calls [][]byte }

func (w *writes) Write(p []byte) (int, error) {
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

// WriteCompact writes, one Write per request, exactly the lines
// json.Encoder gives for Encode's requests of the compacted context, and
// leaves the compacted context at the front of its input.
func TestWriteCompactMatchesEncode(t *testing.T) {
	indented := func(v any) []byte {
		b, err := json.MarshalIndent(v, "  ", "\t")
		require.NoError(t, err)
		return b
	}
	big := map[string]any{"issue": map[string]string{"body": strings.Repeat("lorem \"ipsum\"\\ \t\n ", 40_000)}, "n": []any{1, 2.5, true, nil, "a b"}}
	// Sizes are the least that prove each case's point: the room in a
	// request depends on how many digits its index and total have, so
	// "many" crosses from one digit to two (≥ 10 requests) and the last
	// case from two to three (≥ 100); each case checks it got there.
	cases := []struct {
		name      string
		in        []byte
		ts        time.Time
		minWrites int
	}{
		{"empty object", []byte(`{}`), testTime, 1},
		{"spaced small", []byte(" {\n \"a\" : [ 1 , \"x y\" ] ,\r\n\t\"b\":{ } } \n"), testTime.Add(123 * time.Millisecond), 1},
		{"compact two shards", object(3, 70_000), testTime, 2},
		{"compact many shards", object(4, 500_000), testTime, 10},
		{"indented many shards", indented(big), testTime, 10},
		{"escapes and unicode", []byte(`{"a\"\\":"\u00e9 é \" \\\" ","b" : "\\"}`), testTime, 1},
		{"padding in last piece", object(5, 64_001), testTime, 2},
		{"more than 99 shards", object(6, 4_800_000), testTime, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := encoderLines(t, testJob, c.in, c.ts)
			require.NoError(t, err)
			var w writes
			in := bytes.Clone(c.in)
			got, err := WriteCompact(&w, testJob, in, c.ts)
			require.NoError(t, err)
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, c.in))
			assert.Equal(t, compact.Bytes(), got, "compacted context")
			assert.Equal(t, want, bytes.Join(w.calls, nil))
			assert.GreaterOrEqual(t, len(w.calls), c.minWrites, "requests")
			for i, call := range w.calls {
				assert.Equal(t, 1, bytes.Count(call, []byte("\n")), "write %d is one whole request", i)
				assert.True(t, bytes.HasSuffix(call, []byte("\n")), "write %d ends its line", i)
			}
		})
	}
}

// Nothing is written for a context that is refused, and the error is
// Encode's.
func TestWriteCompactRefusesBeforeWriting(t *testing.T) {
	for _, in := range []string{``, ` `, `[1]`, `{"a":`, `{} {}`, `{"a":"` + strings.Repeat("x", 100_000) + `"`, `"s"`} {
		var w writes
		_, err := WriteCompact(&w, testJob, []byte(in), testTime)
		_, want := Encode(testJob, []byte(in), testTime)
		require.Error(t, err, "%.20q", in)
		assert.Equal(t, want, err)
		assert.Empty(t, w.calls, "%.20q", in)
	}
	var w writes
	_, err := WriteCompact(&w, "job-1", []byte(`{}`), testTime)
	assert.True(t, IsKind(err, KindBadPayload), "%v", err)
	assert.Empty(t, w.calls)
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("broken pipe")
	}
	w.n--
	return len(p), nil
}

func TestWriteCompactWriteError(t *testing.T) {
	_, err := WriteCompact(&failWriter{n: 2}, testJob, object(1, 300_000), testTime)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write request 2: broken pipe")
}

// FuzzCompactObject: compactObject gives json.Compact's bytes, in place, for
// every JSON object, and refuses exactly what checkObject refuses.
func FuzzCompactObject(f *testing.F) {
	for _, s := range []string{`{}`, " { \"a\" : [ 1 , 2 ] }\n", `{"a":"x \" y\\"}`, `{"a":"\\\\\" "}`, `[1, 2]`, `{"a":`, `{} {}`, "{\"a\":\"\t\"}", `{"a" : "é"  ,  "b":"\u0020"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		b := bytes.Clone(in)
		got, err := compactObject(b)
		if want := checkObject(in); want != nil {
			if err == nil || err.Error() != want.Error() {
				t.Fatalf("compactObject(%q) error %v, checkObject says %v", in, err, want)
			}
			if !bytes.Equal(b, in) {
				t.Fatalf("refused input was changed")
			}
			return
		}
		if err != nil {
			t.Fatalf("compactObject(%q): %v", in, err)
		}
		var want bytes.Buffer
		if cerr := json.Compact(&want, in); cerr != nil {
			t.Fatalf("json.Compact refuses what checkObject accepts: %v", cerr)
		}
		if !bytes.Equal(want.Bytes(), got) {
			t.Fatalf("compactObject(%q) = %q, json.Compact gives %q", in, got, want.Bytes())
		}
		if len(got) > 0 && &got[0] != &b[0] {
			t.Fatalf("not compacted in place")
		}
	})
}

// FuzzSkipString: on a valid JSON string followed by more JSON, skipString
// ends exactly after the string's closing quote.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`a`, `\"`, `\\`, `\\\"`, `a\"b\\c\"\\`, `\u0022`, ``, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, _ := json.Marshal(s) // s with its bad UTF-8 replaced, escaped
		for _, str := range [][]byte{q, []byte(`"` + s + `"`)} {
			if !json.Valid(str) {
				continue
			}
			b := append(bytes.Clone(str), `,"x\"\\"]`...)
			if got := skipString(b, 0); got != len(str) {
				t.Fatalf("skipString(%q) = %d, want %d", b, got, len(str))
			}
		}
	})
}
