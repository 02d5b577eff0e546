package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

func TestMCPUsage(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"mcp"}, 2, "--config is required"},
		{[]string{"mcp", "extra"}, 2, "unexpected argument"},
		{[]string{"mcp", "--config", "/nonexistent/gate.json"}, 1, "gate config /nonexistent/gate.json"},
		{[]string{"mcp", "--help"}, 0, "--config"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, c.args)
			assert.Equal(t, c.code, code, errb.String())
			assert.Contains(t, out.String()+errb.String(), c.contains)
		})
	}
}

// TestMCPServesOverStdio speaks raw JSON-RPC to `runner mcp` in-process.
func TestMCPServesOverStdio(t *testing.T) {
	dir := t.TempDir()
	ceil := policy.DefaultCeilings()
	cfg := gate.Config{RunDir: dir, Bot: "bot", Here: gate.Thread{Repo: "o/r", Number: 3},
		Flags: "here-only", Ceilings: &ceil, JobID: "j"}
	path := filepath.Join(dir, "gate.json")
	require.NoError(t, cfg.WriteFile(path))

	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_comment","arguments":{"repo":"o/r","number":3,"body":"hi"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_issue","arguments":{"repo":"o/r","title":"t","body":"b"}}}`,
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		code := app.Main(context.Background(), &cli.Env{Stdin: inR, Stdout: outW, Stderr: io.Discard}, []string{"mcp", "--config", path})
		outW.Close()
		done <- code
	}()
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				return
			}
		}
	}()
	// Read until all three requests are answered, then close stdin: the
	// server ends on EOF.
	answers := map[float64]map[string]any{}
	sc := bufio.NewScanner(outR)
	for len(answers) < 3 && sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		if id, ok := m["id"].(float64); ok {
			answers[id] = m
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	assert.Equal(t, 0, <-done)
	assert.NotContains(t, answers[2]["result"], "isError")
	res3 := answers[3]["result"].(map[string]any)
	assert.Equal(t, true, res3["isError"])
	assert.Contains(t, res3["content"].([]any)[0].(map[string]any)["text"], "here-only")
	es, err := outputs.ReadFile(filepath.Join(dir, contract.OutputsFile))
	require.NoError(t, err)
	assert.Len(t, es, 1)
}
