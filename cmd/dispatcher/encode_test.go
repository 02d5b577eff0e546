package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

const encodeJob = "0f8fad5b-d9cb-469f-a165-70867728950e"

func runApp(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// assembleLines is the runner's side of the round trip.
func assembleLines(t *testing.T, out string) []byte {
	t.Helper()
	a := transport.NewAssembler(transport.Options{})
	for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		require.Less(t, len(line), contract.DispatchBodyBytes)
		et, p, err := transport.ParseLine([]byte(line))
		require.NoError(t, err)
		_, err = a.Add(et, p)
		require.NoError(t, err)
	}
	ctx, err := a.Context()
	require.NoError(t, err)
	return ctx
}

func TestEncodeSmall(t *testing.T) {
	code, out, errs := runApp(t, "{\n  \"a\": 1\n}\n", "encode", "--jobid", strings.ToUpper(encodeJob), "--timestamp", "2025-11-22T06:09:00+01:00")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, `{"event_type":"agent_small","client_payload":{"jobid":"`+encodeJob+`","context_b64":"eyJhIjoxfQ==","timestamp":"2025-11-22T05:09:00Z"}}`+"\n", out)
	assert.Equal(t, `{"a":1}`, string(assembleLines(t, out)))
}

func TestEncodeShardsRoundTrip(t *testing.T) {
	in, err := json.MarshalIndent(map[string]any{"issue": map[string]string{"body": strings.Repeat("lorem ipsum ", 30_000)}}, "", "  ")
	require.NoError(t, err)
	code, out, errs := runApp(t, string(in), "encode", "--jobid", encodeJob)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Equal(t, 8, len(lines), "shards for %d compact bytes", len(in))
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, `{"event_type":"agent_shard"`), "compact JSON request body")
	}
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, in))
	assert.Equal(t, compact.Bytes(), assembleLines(t, out))

	// Default timestamp: now, in UTC, whole seconds.
	_, p, err := transport.ParseLine([]byte(lines[0]))
	require.NoError(t, err)
	ts, err := time.Parse(time.RFC3339, p.Timestamp)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(p.Timestamp, "Z"), p.Timestamp)
	assert.Zero(t, ts.Nanosecond())
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		msg         string
	}{
		{"missing jobid", `{}`, nil, 2, "--jobid is required"},
		{"invalid jobid", `{}`, []string{"--jobid", "job-1"}, 2, `jobid "job-1" is not a UUID`},
		{"bad timestamp", `{}`, []string{"--jobid", encodeJob, "--timestamp", "yesterday"}, 2, "not RFC 3339"},
		{"stray argument", `{}`, []string{"--jobid", encodeJob, "extra"}, 2, `unexpected argument "extra"`},
		{"unknown flag", `{}`, []string{"--job", encodeJob}, 2, "flag provided but not defined"},
		{"array", `[1,2]`, []string{"--jobid", encodeJob}, 2, "must be one JSON object"},
		{"string", `"hi"`, []string{"--jobid", encodeJob}, 2, "not a string"},
		{"invalid json", `{"a":`, []string{"--jobid", encodeJob}, 2, "not valid JSON"},
		{"two objects", `{} {}`, []string{"--jobid", encodeJob}, 2, "not valid JSON"},
		{"empty stdin", ``, []string{"--jobid", encodeJob}, 2, "not valid JSON"},
		{"over max bytes", `{"a":"0123456789"}`, []string{"--jobid", encodeJob, "--max-bytes", "10"}, 2, "over 10 bytes"},
		{"bad max bytes", `{}`, []string{"--jobid", encodeJob, "--max-bytes", "0"}, 2, "--max-bytes must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runApp(t, c.stdin, append([]string{"encode"}, c.args...)...)
			assert.Equal(t, c.code, code)
			assert.NotContains(t, out, "event_type", "no request on a failure")
			assert.Contains(t, errs, c.msg)
		})
	}
}

func TestEncodeHelp(t *testing.T) {
	code, out, _ := runApp(t, "", "encode", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--jobid UUID")
}

// A context on stdin as a regular file (read into a buffer sized once from
// its length) encodes to the same lines as from a pipe, also when the file
// is over --max-bytes (refused, not cut) or exactly at it.
func TestEncodeFromFile(t *testing.T) {
	in, err := json.MarshalIndent(map[string]any{"issue": map[string]string{"body": strings.Repeat("lorem ipsum ", 30_000)}}, "", "  ")
	require.NoError(t, err)
	fromFile := func(args ...string) (int, string, string) {
		p := filepath.Join(t.TempDir(), "context.json")
		require.NoError(t, os.WriteFile(p, in, 0o600))
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		var out, errb bytes.Buffer
		code := app.Main(context.Background(), &cli.Env{Stdin: f, Stdout: &out, Stderr: &errb}, args)
		return code, out.String(), errb.String()
	}
	for _, tc := range []struct {
		name     string
		maxBytes int
		code     int
	}{
		{"default cap", 0, 0},
		{"exactly the cap", len(in), 0},
		{"one byte over the cap", len(in) - 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"encode", "--jobid", encodeJob, "--timestamp", "2025-11-22T06:09:00Z"}
			if tc.maxBytes > 0 {
				args = append(args, fmt.Sprintf("--max-bytes=%d", tc.maxBytes))
			}
			code, out, errs := fromFile(args...)
			require.Equal(t, tc.code, code, errs)
			if tc.code != 0 {
				assert.Contains(t, errs, "--max-bytes")
				return
			}
			pcode, pout, perrs := runApp(t, string(in), args...)
			require.Equal(t, 0, pcode, perrs)
			assert.Equal(t, pout, out)
		})
	}
}
