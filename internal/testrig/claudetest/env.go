package claudetest

import (
	"os"

	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/claude"
)

// DummyAPIKey is what ANTHROPIC_API_KEY is set to; the fake model ignores
// it. It deliberately does not look like a real key (redactors match sk-ant-).
const DummyAPIKey = "fakemodel-dummy-key"

// OfflineEnv is a complete environment for running Claude Code against a
// fake Messages API at baseURL with no internet: HOME and CLAUDE_CONFIG_DIR
// isolated under home, telemetry, auto-update, error reporting and other
// nonessential traffic (which includes the session-title side request)
// off, and no retries of failed API calls. Only PATH and TMPDIR are
// inherited, so a developer's real credentials never leak into a test.
func OfflineEnv(home, baseURL string) []string {
	env := []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + home + "/.claude",
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=" + DummyAPIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
		"DISABLE_COST_WARNINGS=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"NO_COLOR=1",
	}
	// wait for the gate as the runner does (a loaded machine starts it late)
	env = append(env, claude.GateWaitEnv...)
	for _, k := range []string{"PATH", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
