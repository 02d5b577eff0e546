package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

const decodeJob = "0f8fad5b-d9cb-469f-a165-70867728950e"

func runApp(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// encodeLines is the dispatcher's side of the round trip: request bodies,
// every second one wrapped as a repository_dispatch webhook event.
func encodeLines(t *testing.T, ctx []byte, job string) []string {
	t.Helper()
	reqs, err := transport.Encode(job, ctx, time.Date(2025, 11, 22, 5, 9, 0, 0, time.UTC))
	require.NoError(t, err)
	lines := make([]string, len(reqs))
	for i, r := range reqs {
		var v any = r
		if i%2 == 1 {
			v = map[string]any{"action": r.EventType, "branch": "main", "client_payload": r.ClientPayload,
				"repository": map[string]any{"full_name": "acme/control"}, "sender": map[string]any{"login": "bot"}}
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		lines[i] = string(b)
	}
	return lines
}

func bigContext() []byte {
	b, _ := json.Marshal(map[string]any{"issue": map[string]string{"body": strings.Repeat("lorem ipsum ", 30_000)}, "truncation": map[string]bool{}})
	return b
}

func TestDecodeRoundTrip(t *testing.T) {
	ctx := bigContext()
	lines := encodeLines(t, ctx, decodeJob)
	require.Greater(t, len(lines), 2)
	for seed := range uint64(3) {
		in := append(append([]string(nil), lines...), lines[0], "", "   ")
		rand.New(rand.NewPCG(seed, 0)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		code, out, errs := runApp(t, strings.Join(in, "\r\n"), "decode")
		require.Equal(t, 0, code, errs)
		assert.Equal(t, string(ctx)+"\n", out)
	}
}

func TestDecodeSmall(t *testing.T) {
	lines := encodeLines(t, []byte(`{"issue":{"number":7}}`), decodeJob)
	require.Len(t, lines, 1)
	code, out, errs := runApp(t, lines[0], "decode") // no final newline
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "{\"issue\":{\"number\":7}}\n", out)
}

func TestDecodeErrors(t *testing.T) {
	lines := encodeLines(t, bigContext(), decodeJob)
	other := encodeLines(t, bigContext(), "6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	cases := []struct {
		name  string
		stdin string
		args  []string
		msg   []string
	}{
		{"no input", "", nil, []string{"incomplete", "no events"}},
		{"blank only", "\n \n", nil, []string{"no events"}},
		{"missing shard", strings.Join(append([]string{lines[0]}, lines[2:]...), "\n"), nil, []string{"incomplete", "missing 1"}},
		{"jobid mismatch", lines[0] + "\n" + other[1], nil, []string{"line 2", "jobid_mismatch"}},
		{"not json", "\nhello\n", nil, []string{"line 2", "bad_payload", "not a JSON object"}},
		{"unknown payload field", `{"event_type":"agent_small","client_payload":{"jobid":"x","actor":"y"}}`, nil, []string{`unknown field "actor"`}},
		{"over cap", strings.Join(lines, "\n"), []string{"--max-bytes", "100000", "--max-shards", "50"}, []string{"too_large", "cap of 100000"}},
		{"line too long", strings.Repeat(" ", 2<<20), nil, []string{"line 1", "longer than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runApp(t, c.stdin, append([]string{"decode"}, c.args...)...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out, "nothing partial on stdout")
			for _, m := range c.msg {
				assert.Contains(t, errs, m)
			}
		})
	}
}

func TestDecodeUsage(t *testing.T) {
	code, _, errs := runApp(t, "", "decode", "--max-bytes", "-1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--max-bytes must be positive")
	code, _, errs = runApp(t, "", "decode", "stray")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "unexpected argument")
	code, out, _ := runApp(t, "", "decode", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--max-bytes")
}

// Lines are handed to ParseLine where they were read: short ones in
// bufio's buffer, long ones (webhook events past 64 KiB) gathered in one
// buffer reused for the next. Shards of different content, long and short
// lines mixed, read in uneven pieces: the context comes out whole, so no
// piece kept a slice of a line.
func TestDecodeReusedLineBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	body := make([]byte, 400_000)
	for i := range body {
		body[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
	}
	ctx, err := json.Marshal(map[string]string{"body": string(body)})
	require.NoError(t, err)
	reqs, err := transport.Encode(decodeJob, ctx, time.Date(2025, 11, 22, 5, 9, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Greater(t, len(reqs), 5)
	var lines []string
	for i, r := range reqs {
		var v any = r
		if i%3 != 0 { // a webhook event longer than the line buffer
			v = map[string]any{"action": r.EventType, "branch": strings.Repeat("b", i), "client_payload": r.ClientPayload,
				"repository": map[string]any{"description": strings.Repeat("d", 30_000*i)}}
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	require.Greater(t, len(lines[len(lines)-1]), 0)
	in := strings.Join(lines, "\n") // the last line has no newline
	got, err := decode(&unevenReader{s: in, rng: rand.New(rand.NewPCG(3, 4))}, transport.Options{})
	require.NoError(t, err)
	assert.Equal(t, string(ctx), string(got))
}

// unevenReader returns between 1 byte and 200 KB per Read.
type unevenReader struct {
	s   string
	rng *rand.Rand
}

func (r *unevenReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(200_000))], r.s)
	r.s = r.s[n:]
	return n, nil
}
