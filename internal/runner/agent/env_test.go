package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/replay"
	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

func TestEngineEnv(t *testing.T) {
	ghp := "ghp_" + strings.Repeat("A", 36)
	parent := map[string]string{
		"PATH":                           "/usr/bin:/bin",
		"HOME":                           "/home/runner",
		"LANG":                           "C.UTF-8",
		"ANTHROPIC_API_KEY":              "sk-ant-api03-" + strings.Repeat("x", 40),
		"ANTHROPIC_BASE_URL":             "http://127.0.0.1:9999",
		"CLAUDE_CODE_MAX_RETRIES":        "0",
		"CLAUDE_CODE_SNEAKY":             "token " + ghp, // allowed prefix, token value
		"HTTPS_PROXY":                    "http://proxy:3128",
		"GITHUB_TOKEN":                   ghp,
		"GH_TOKEN":                       ghp,
		"BOT_TOKEN":                      "github_pat_" + strings.Repeat("b", 40),
		"ACTIONS_RUNTIME_TOKEN":          "eyJhbGciOi.eyJzdWIiOi.sig",
		"ACTIONS_ID_TOKEN_REQUEST_URL":   "https://token.actions",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "x",
		"ACTIONS_CACHE_URL":              "https://cache",
		"GITHUB_REPOSITORY":              "o/r",
		"GITHUB_API_URL":                 "https://api.github.com",
		"RUNNER_TEMP":                    "/tmp/r",
		"NODE_OPTIONS":                   "--require /tmp/evil.js",
		"TZ":                             "token=" + ghp, // allowed name, token value
		"MY_APP_SECRET":                  "hunter2",
		"DISABLE_TELEMETRY":              "0", // forced back to 1
	}
	env, got, dropped := engineEnvOf(claude.Name, parent, "/tmp/home-1", "/w/target")

	want := map[string]string{
		"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
		"ANTHROPIC_API_KEY": parent["ANTHROPIC_API_KEY"], "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999",
		"CLAUDE_CODE_MAX_RETRIES": "0", "HTTPS_PROXY": "http://proxy:3128",
		"HOME": "/tmp/home-1", "CLAUDE_CONFIG_DIR": "/tmp/home-1/.claude",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
		"DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1", "NO_COLOR": "1",
		"GIT_CEILING_DIRECTORIES": "/w", "GIT_DISCOVERY_ACROSS_FILESYSTEM": "0",
	}
	for _, kv := range gitexec.ConfigEnv() {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	assert.Equal(t, "/dev/null", want["GIT_CONFIG_GLOBAL"], "the engine's git reads no global config")
	assert.Equal(t, want, got)
	for _, kv := range env {
		assert.NotContains(t, kv, "ghp_")
		assert.NotContains(t, kv, "github_pat_")
	}
	for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN", "BOT_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_CACHE_URL", "NODE_OPTIONS", "CLAUDE_CODE_SNEAKY", "TZ", "MY_APP_SECRET", "HOME"} {
		assert.Contains(t, dropped, name)
	}
	assert.IsNonDecreasing(t, env, "sorted, so the record is stable")
}

func TestEngineEnvEmptyParent(t *testing.T) {
	env, dropped := EngineEnv(EnvSource{Engine: claude.Name, Getenv: func(string) string { return "" }, Home: "/h"})
	assert.Contains(t, env, "HOME=/h")
	assert.Empty(t, dropped)
	for _, kv := range env {
		assert.False(t, strings.HasPrefix(kv, "PATH="), "no empty PATH invented")
	}
}

// TestEngineEnvOnlyTheSelectedKey: the job's environment may hold every
// engine's key and settings (an operator's self-hosted runner, a workflow
// that passes them all); the CLI gets its own engine's only.
func TestEngineEnvOnlyTheSelectedKey(t *testing.T) {
	parent := map[string]string{"PATH": "/bin", "CLAUDE_CODE_MAX_RETRIES": "0",
		"ANTHROPIC_BASE_URL": "http://a", "OPENAI_BASE_URL": "http://o", "GOOGLE_GEMINI_BASE_URL": "http://g"}
	for _, k := range contract.ModelKeys() {
		parent[k] = "key-of-" + k
	}
	tests := []struct {
		engine string
		want   []string // the engine-specific variables that pass
	}{
		{claude.Name, []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_MAX_RETRIES"}},
		{codex.Name, []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}},
		{gemini.Name, []string{"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"}},
		{replay.Name, nil},
		{"Claude", nil}, // not an engine name: no key (config refuses it anyway)
	}
	for _, tt := range tests {
		t.Run(tt.engine, func(t *testing.T) {
			_, got, dropped := engineEnvOf(tt.engine, parent, "/h", "/w/t")
			assert.Equal(t, "/bin", got["PATH"])
			for name := range parent {
				if name == "PATH" {
					continue
				}
				if slices.Contains(tt.want, name) {
					assert.Equal(t, parent[name], got[name], name)
					continue
				}
				assert.NotContains(t, got, name, "engine %s must not get %s", tt.engine, name)
				assert.Contains(t, dropped, name)
			}
			if k := contract.EngineModelKeys[tt.engine]; k != "" {
				assert.Contains(t, tt.want, k, "the contract's key of %s passes", tt.engine)
			}
		})
	}
}

// engineEnvOf runs EngineEnv on parent as the process environment and
// returns the environment also as a map.
func engineEnvOf(engine string, parent map[string]string, home, workDir string) (env []string, got map[string]string, dropped []string) {
	var environ []string
	for k, v := range parent {
		environ = append(environ, k+"="+v)
	}
	env, dropped = EngineEnv(EnvSource{Engine: engine, Getenv: func(k string) string { return parent[k] }, Environ: environ,
		Home: home, WorkDir: workDir})
	got = map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	return env, got, dropped
}
