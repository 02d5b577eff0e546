package agent

import (
	"sort"
	"strings"

	"github.com/mention-runner/mention-runner/internal/gitexec"
	"github.com/mention-runner/mention-runner/internal/redact"
)

// envAllowed are the variables passed to the engine as they are: locale,
// proxies, TLS roots, and what Claude Code needs to reach its model.
var envAllowed = []string{
	"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
	"ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
	"ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_CUSTOM_HEADERS",
	"DISABLE_PROMPT_CACHING", "MAX_THINKING_TOKENS", "API_TIMEOUT_MS", "BASH_DEFAULT_TIMEOUT_MS",
	// engine codex (OPENAI_BASE_URL is read by the runner's codex engine)
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT",
	// engine gemini
	"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL",
}

// envAllowedPrefixes pass Claude Code's own settings (CLAUDE_CODE_MAX_RETRIES,
// CLAUDE_CODE_USE_BEDROCK…). Values are still screened for GitHub tokens.
var envAllowedPrefixes = []string{"CLAUDE_CODE_"}

// envForced are set whatever the parent says: no self-update, telemetry,
// error reports or other traffic besides the model API (the codex and
// gemini engines turn the same off in the settings they write).
// gitexec.ConfigEnv is added too, so any git the engine runs ignores
// system and global config and runs no hook, fsmonitor or credential
// helper.
var envForced = []string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	"DISABLE_AUTOUPDATER=1",
	"DISABLE_TELEMETRY=1",
	"DISABLE_ERROR_REPORTING=1",
	"DISABLE_BUG_COMMAND=1",
	"NO_COLOR=1",
}

// envNever are refused even if an allow-list entry or prefix would match
// them one day: GitHub and Actions credentials and runtime endpoints.
var envNever = []string{"GITHUB_", "GH_", "BOT_", "ACTIONS_", "RUNNER_", "INPUT_", "NODE_OPTIONS", "MR_"}

// EngineEnv is the engine's whole environment, built from an allow-list:
// the allowed variables of the parent (getenv for values, environ for the
// names a prefix may match), HOME and CLAUDE_CONFIG_DIR pointing at home (a
// fresh directory, so no user config or credentials are picked up), and
// the forced settings. A variable whose value holds a GitHub token is
// dropped whatever its name. NODE_OPTIONS is never passed: it can load
// arbitrary code into Claude Code. dropped names what was left out of the
// parent's environment (names only, for the record).
func EngineEnv(getenv func(string) string, environ []string, home string) (env, dropped []string) {
	set := map[string]string{}
	consider := func(name string) {
		if _, done := set[name]; done || name == "" {
			return
		}
		v := getenv(name)
		if v == "" {
			return
		}
		if refused(name) || holdsGitHubToken(v) {
			dropped = append(dropped, name)
			return
		}
		set[name] = v
	}
	for _, n := range envAllowed {
		consider(n)
	}
	allowedSet := map[string]bool{}
	for _, n := range envAllowed {
		allowedSet[n] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if allowedSet[name] {
			continue
		}
		if hasAnyPrefix(name, envAllowedPrefixes) {
			consider(name)
			continue
		}
		if name != "" {
			dropped = append(dropped, name)
		}
	}
	set["HOME"] = home
	set["CLAUDE_CONFIG_DIR"] = home + "/.claude"
	for _, kv := range append(append([]string{}, envForced...), gitexec.ConfigEnv()...) {
		k, v, _ := strings.Cut(kv, "=")
		set[k] = v
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	sort.Strings(dropped)
	return env, dedupe(dropped)
}

func refused(name string) bool {
	return hasAnyPrefix(strings.ToUpper(name), envNever)
}

// holdsGitHubToken reports a value with a GitHub token's shape in it.
func holdsGitHubToken(v string) bool {
	return strings.Contains(redact.String(v), "[REDACTED:github-token]")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
