package actionwiring

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCheck runs a settings-check step's script with bash, its env as the
// workflow evaluates it, and returns its exit code and output.
func runCheck(t *testing.T, script string, env map[string]string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String()
	}
	require.NoError(t, err)
	return 0, out.String()
}

// TestPrepareChecksTheSettings: the first step of the first job names
// every missing setting (the bot's login, BOT_TOKEN, the engine's key)
// as an ::error:: and fails, before any job spends time.
func TestPrepareChecksTheSettings(t *testing.T) {
	w, err := Load("../../..")
	require.NoError(t, err)
	all := map[string]string{"BOT_TOKEN": "b", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "GEMINI_API_KEY": "g"}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for n, v := range all {
			if n != k {
				m[n] = v
			}
		}
		return m
	}
	cases := []struct {
		name    string
		with    map[string]string
		secrets map[string]string
		errors  []string // each names what is missing; none = the step passes
	}{
		{"all set", map[string]string{"bot-login": "bot"}, all, nil},
		{"replay needs no key", map[string]string{"bot-login": "bot", "engine": "replay"}, map[string]string{"BOT_TOKEN": "b"}, nil},
		{"no bot login", map[string]string{"bot-login": ""}, all, []string{"BOT_LOGIN"}},
		{"no BOT_TOKEN", map[string]string{"bot-login": "bot"}, without("BOT_TOKEN"), []string{"BOT_TOKEN"}},
		{"no key for claude", map[string]string{"bot-login": "bot"}, without("ANTHROPIC_API_KEY"), []string{"ANTHROPIC_API_KEY"}},
		{"no key for codex", map[string]string{"bot-login": "bot", "engine": "codex"}, without("OPENAI_API_KEY"), []string{"OPENAI_API_KEY"}},
		{"no key for gemini", map[string]string{"bot-login": "bot", "engine": "gemini"}, without("GEMINI_API_KEY"), []string{"GEMINI_API_KEY"}},
		{"another engine's key is not enough", map[string]string{"bot-login": "bot", "engine": "codex"}, map[string]string{"BOT_TOKEN": "b", "ANTHROPIC_API_KEY": "a"}, []string{"OPENAI_API_KEY"}},
		{"everything missing", map[string]string{"bot-login": ""}, nil, []string{"BOT_LOGIN", "BOT_TOKEN", "ANTHROPIC_API_KEY"}},
		{"unknown engine", map[string]string{"bot-login": "bot", "engine": "gpt"}, all, []string{"engine=gpt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			with := map[string]string{"runner-ref": "v0.1.0"}
			for k, v := range tc.with {
				with[k] = v
			}
			vals, err := w.JobValues("prepare", Call{With: with, Secrets: tc.secrets, GitHub: map[string]string{"token": "t"}})
			require.NoError(t, err)
			script, ok := vals["step 1 run"]
			require.True(t, ok, "the prepare job's first step is the settings check")
			env := map[string]string{}
			for k, v := range vals {
				if name, ok := strings.CutPrefix(k, "step 1 env "); ok {
					env[name] = v
				}
			}
			for k, v := range env {
				for _, secret := range tc.secrets {
					assert.NotEqual(t, secret, v, "the check sees whether %s is set, not its value", k)
				}
			}
			code, out := runCheck(t, script, env)
			if len(tc.errors) == 0 {
				assert.Equal(t, 0, code, out)
				assert.NotContains(t, out, "::error")
				return
			}
			assert.NotEqual(t, 0, code, out)
			assert.Equal(t, len(tc.errors), strings.Count(out, "::error"), out)
			for _, e := range tc.errors {
				assert.Contains(t, out, e)
			}
		})
	}
}

// TestDispatcherChecksTheSettings: dispatcher.yml's first step names every
// missing variable and secret as an ::error:: and fails: a run without
// its settings is never silently skipped.
func TestDispatcherChecksTheSettings(t *testing.T) {
	wf, err := ReadWorkflow(filepath.Join("../../..", ".github/workflows/dispatcher.yml"))
	require.NoError(t, err)
	j, ok := wf.Jobs["dispatcher"]
	require.True(t, ok)
	step := j.Steps[0]
	allVars := map[string]string{"MENTION_RUNNER_REF": "v0.1.0", "BOT_LOGIN": "bot", "ALLOWED_USERS": "*"}
	cases := []struct {
		name    string
		vars    map[string]string
		secrets map[string]string
		errors  []string
	}{
		{"all set", allVars, map[string]string{"BOT_TOKEN": "b"}, nil},
		{"no BOT_LOGIN", map[string]string{"MENTION_RUNNER_REF": "v0.1.0", "ALLOWED_USERS": "*"}, map[string]string{"BOT_TOKEN": "b"}, []string{"BOT_LOGIN"}},
		{"no BOT_TOKEN", allVars, nil, []string{"BOT_TOKEN"}},
		{"nothing set", nil, nil, []string{"MENTION_RUNNER_REF", "BOT_LOGIN", "ALLOWED_USERS", "BOT_TOKEN"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := Context{"vars": orEmpty(tc.vars), "secrets": orEmpty(tc.secrets), "github": map[string]string{"repository": "me/control"}}
			env := map[string]string{}
			for k, raw := range step.Env {
				v, err := Interpolate(raw, ctx)
				require.NoError(t, err, k)
				env[k] = v
			}
			code, out := runCheck(t, step.Run, env)
			if len(tc.errors) == 0 {
				assert.Equal(t, 0, code, out)
				return
			}
			assert.NotEqual(t, 0, code, out)
			assert.Equal(t, len(tc.errors), strings.Count(out, "::error"), out)
			for _, e := range tc.errors {
				assert.Contains(t, out, e)
			}
		})
	}
}
