package agent

import (
	"sort"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/codex"
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/gemini"
	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

// envAllowed are the variables passed to every engine as they are:
// locale, proxies and TLS roots.
var envAllowed = []string{
	"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// engineEnvAllowed are the variables only the named engine gets: its model
// key (contract.EngineModelKeys, added by engineAllowed) and the settings
// it reads to reach its model. Another engine's key never reaches the CLI,
// even if the job's environment holds it.
var engineEnvAllowed = map[string][]string{
	claude.Name: {"ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
		"ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
		"ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_CUSTOM_HEADERS",
		"DISABLE_PROMPT_CACHING", "MAX_THINKING_TOKENS", "API_TIMEOUT_MS", "BASH_DEFAULT_TIMEOUT_MS"},
	// OPENAI_BASE_URL is read by the runner's codex engine
	codex.Name:  {"OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT"},
	gemini.Name: {"GOOGLE_GEMINI_BASE_URL"},
}

// engineEnvPrefixes pass Claude Code's own settings (CLAUDE_CODE_MAX_RETRIES,
// CLAUDE_CODE_USE_BEDROCK…) to engine claude. Values are still screened for
// GitHub tokens.
var engineEnvPrefixes = map[string][]string{claude.Name: {"CLAUDE_CODE_"}}

// engineAllowed is envAllowed plus engine's own variables and model key;
// an engine without a model API (replay, or a name the config refused)
// gets no key at all.
func engineAllowed(engine string) []string {
	out := append(append([]string{}, envAllowed...), engineEnvAllowed[engine]...)
	if k := contract.EngineModelKeys[engine]; k != "" {
		out = append(out, k)
	}
	return out
}

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

// EnvSource is what the engine's environment is built from.
type EnvSource struct {
	Engine  string              // the engine's name: only its key and settings pass
	Getenv  func(string) string // the parent's values
	Environ []string            // the parent's names (for the names a prefix may match)
	Home    string              // a fresh directory: HOME and CLAUDE_CONFIG_DIR
	WorkDir string              // absolute: the engine's git discovers no repository above it
}

// EngineEnv is the engine's whole environment, built from an allow-list:
// the allowed variables of the parent (s.Engine's own key and settings
// among them, no other engine's), HOME and CLAUDE_CONFIG_DIR pointing at
// s.Home (a fresh directory, so no user config or credentials are picked
// up), the forced settings, and gitexec.DiscoveryEnv(s.WorkDir) so a git
// the engine runs in its work tree cannot find a repository in a parent
// directory (the runner's own checkout, say). A variable whose value holds a GitHub token is
// dropped whatever its name. NODE_OPTIONS is never passed: it can load
// arbitrary code into Claude Code. dropped names what was left out of the
// parent's environment (names only, for the record).
func EngineEnv(s EnvSource) (env, dropped []string) {
	getenv, environ, home := s.Getenv, s.Environ, s.Home
	allowed, prefixes := engineAllowed(s.Engine), engineEnvPrefixes[s.Engine]
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
	for _, n := range allowed {
		consider(n)
	}
	allowedSet := map[string]bool{}
	for _, n := range allowed {
		allowedSet[n] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if allowedSet[name] {
			continue
		}
		if hasAnyPrefix(name, prefixes) {
			consider(name)
			continue
		}
		if name != "" {
			dropped = append(dropped, name)
		}
	}
	set["HOME"] = home
	set["CLAUDE_CONFIG_DIR"] = home + "/.claude"
	forced := append(append([]string{}, envForced...), gitexec.ConfigEnv()...)
	for _, kv := range append(forced, gitexec.DiscoveryEnv(s.WorkDir)...) {
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
