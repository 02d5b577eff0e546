package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

func TestAssembleCommand(t *testing.T) {
	sim, base := simfixture.Start(t, githubsim.Options{})
	sim.AddOrg("acme")
	sim.AddUser("mr-runner")
	sim.AddToken("tok", "mr-runner")
	_, err := sim.AddRepo("acme/control", true)
	require.NoError(t, err)
	sim.SetPermission("acme/control", "mr-runner", "write")

	ctxJSON := `{"repository":{"full_name":"alice/app"},"issue":{"number":3},"trigger_comment":{"id":1,"node_id":"IC_cmd","html_url":"https://github.com/alice/app/issues/3#issuecomment-1","body":"@mr-bot hi","user":{"login":"alice"},"created_at":"2025-03-01T11:58:00Z"}}`
	reqs, err := transport.Encode(transport.JobID("IC_cmd"), []byte(ctxJSON), time.Now())
	require.NoError(t, err)
	event := func(p any) string {
		b, err := json.Marshal(map[string]any{"action": reqs[0].EventType, "client_payload": p})
		require.NoError(t, err)
		return string(b)
	}
	bad := reqs[0].ClientPayload
	bad.ContextB64 = "!!!!"

	tests := []struct {
		name   string
		event  string
		args   []string
		code   int
		stderr string
		ready  string
	}{
		{"small event", event(reqs[0].ClientPayload), nil, 0, "", "true"},
		{"invalid base64", event(bad), nil, 1, "invalid_base64", "false"},
		{"stray argument", event(reqs[0].ClientPayload), []string{"extra"}, 2, `unexpected argument "extra"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "event.json"), []byte(tt.event), 0o644))
			env := map[string]string{
				"BOT_LOGIN": "mr-bot", "CONTROL_REPO": "acme/control", "GITHUB_API_URL": base, "GITHUB_SERVER_URL": strings.TrimSuffix(base, "/"), "GITHUB_TOKEN": "tok",
				"GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"), "GITHUB_OUTPUT": filepath.Join(dir, "out"),
				"MR_CONTEXT_FILE": filepath.Join(dir, "context.json"),
			}
			var out, errb bytes.Buffer
			code := app.Main(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }},
				append([]string{"assemble"}, tt.args...))
			assert.Equal(t, tt.code, code, out.String()+errb.String())
			assert.Contains(t, errb.String(), tt.stderr)
			if tt.ready == "" {
				return
			}
			outs, err := actions.ReadOutputs(env["GITHUB_OUTPUT"])
			require.NoError(t, err)
			assert.Equal(t, tt.ready, outs["ready"])
			assert.NotEmpty(t, outs["log_issue"])
		})
	}
}
