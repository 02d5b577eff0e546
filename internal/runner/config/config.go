// Package config reads the runner's settings from the environment (the
// composite action maps its inputs to these variables). Every setting is
// declared once in Settings, which also feeds the table in docs/configuration.md; a malformed
// value is an error naming the variable, never a silent default.
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// Setting declares one environment variable.
type Setting struct {
	Env     string
	Input   string // the composite action's input that sets it ("" = none)
	Default string
	Doc     string
	// Modes lists the runner modes that read it ("" = all).
	Modes string
	check func(string) error
}

func intRange(lo, hi int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return nil
	}
}

func durRange(lo, hi time.Duration) func(string) error {
	return func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d < lo || d > hi {
			return fmt.Errorf("want a duration from %s to %s, like 30m", lo, hi)
		}
		return nil
	}
}

func boolean(s string) error {
	if s != "true" && s != "false" {
		return errors.New("want true or false")
	}
	return nil
}

func oneOf(vals ...string) func(string) error {
	return func(s string) error {
		for _, v := range vals {
			if s == v {
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(vals, ", "))
	}
}

func repoName(s string) error {
	o, n, ok := strings.Cut(s, "/")
	if !ok || o == "" || n == "" || strings.Contains(n, "/") {
		return errors.New("want owner/name")
	}
	return nil
}

func budget(s string) error {
	if s == "" {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 1000 {
		return errors.New("want a positive number of US dollars up to 1000, or empty for none")
	}
	return nil
}

// toolList accepts Claude Code permission rules: Name or Name(specifier).
// The gate's own tools are always allowed and may not be listed again.
func toolList(s string) error {
	if s == "" {
		return nil
	}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		name, rest, hasArg := strings.Cut(t, "(")
		if name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" ||
			(hasArg && !strings.HasSuffix(rest, ")")) {
			return fmt.Errorf("%q is not a tool rule like Edit or Bash(git commit:*)", t)
		}
	}
	return nil
}

func sha256Hex(s string) error {
	if s == "" {
		return nil
	}
	if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		return errors.New("want 64 lower-case hex digits")
	}
	return nil
}

func optionalBool(s string) error {
	if s == "" {
		return nil
	}
	return boolean(s)
}

func optionalInt(s string) error {
	if s == "" {
		return nil
	}
	return intRange(1, 1<<30)(s)
}

// Settings is every runner setting.
var Settings = []Setting{
	{Env: "BOT_LOGIN", Input: "bot-login", Doc: "Required: the bot account's login (without @).", check: func(s string) error {
		if s == "" {
			return errors.New("required")
		}
		return nil
	}},
	{Env: "CONTROL_REPO", Input: "control-repo", Doc: "owner/name of the control repo; empty = GITHUB_REPOSITORY. When it is the repository the workflow runs in, publish takes its ids from GITHUB_REPOSITORY_ID and GITHUB_REPOSITORY_OWNER_ID instead of looking them up.", check: repoName},
	{Env: "GITHUB_API_URL", Default: "https://api.github.com", Doc: "REST API base URL (GitHub Enterprise or the simulator)."},
	{Env: "GITHUB_SERVER_URL", Default: "https://github.com", Doc: "Web base URL: links in the report, and where publish pushes pull request branches. The control repo's refs are pushed to the server of `GITHUB_API_URL` (`github.com` for `api.github.com`)."},
	{Env: "MR_RUN_DIR", Input: "run-dir", Default: "runs", Doc: "Where run records go: <dir>/<run-id>/."},
	{Env: "MR_ENGINE", Input: "engine", Default: "claude", Doc: "Agent engine: claude (Claude Code CLI), codex (OpenAI Codex CLI), gemini (Gemini CLI) or replay (scripted session, for tests and the demo).", Modes: "agent,publish", check: oneOf("claude", "codex", "gemini", "replay")},
	{Env: "MR_MODEL", Input: "model", Doc: "Model passed to the engine (--model); empty = the engine's default.", Modes: "agent"},
	{Env: "MR_MAX_TURNS", Input: "max-turns", Default: "30", Doc: "Most agent turns before the run stops as failed.", Modes: "agent", check: intRange(1, 500)},
	{Env: "MR_TIMEOUT", Input: "timeout", Default: "30m", Doc: "Wall-clock limit for the engine.", Modes: "agent", check: durRange(time.Minute/60, 6*time.Hour)},
	{Env: "MR_MAX_BUDGET_USD", Input: "max-budget-usd", Doc: "Optional cost cap passed to Claude Code (--max-budget-usd).", Modes: "agent", check: budget},
	{Env: "MR_COMMENT_LIMIT", Input: "comment-limit", Default: strconv.Itoa(policy.DefaultCeilings().CommentLimit), Doc: "Operator ceiling: comments per issue/PR per run.", check: intRange(0, policy.MaxLimit)},
	{Env: "MR_ISSUE_LIMIT", Input: "issue-limit", Default: strconv.Itoa(policy.DefaultCeilings().IssueLimit), Doc: "Operator ceiling: issues created per run.", check: intRange(0, policy.MaxLimit)},
	{Env: "MR_PR_LIMIT", Input: "pr-limit", Default: strconv.Itoa(policy.DefaultCeilings().PRLimit), Doc: "Operator ceiling: pull requests created per run.", check: intRange(0, policy.MaxLimit)},
	{Env: "MR_MAX_WRITES", Input: "max-writes", Default: strconv.Itoa(policy.DefaultCeilings().MaxWrites), Doc: "Operator ceiling: comments, issues and pull requests of one run together.", check: intRange(0, policy.MaxLimit)},
	{Env: "MR_LABEL_LIMIT", Input: "label-limit", Default: strconv.Itoa(policy.DefaultLabelLimit), Doc: "Operator ceiling: label changes per run (each label add_labels or remove_labels names counts one); comment-only and here-only allow none.", check: intRange(0, policy.MaxLimit)},
	{Env: "MR_REVIEW_COMMENT_LIMIT", Input: "review-comment-limit", Default: strconv.Itoa(policy.DefaultReviewComments), Doc: "Operator ceiling: inline comments in one create_review; a review with more is denied.", check: intRange(0, policy.MaxLimit)},
	{Env: "MR_ALLOW_PUSH", Input: "allow-push", Default: "false", Doc: "Let push_to_pull_request commit the agent's changes onto the pull request's own head branch (never forced; counts as a pull request).", check: boolean},
	{Env: "MR_LOOP_THRESHOLD", Input: "loop-threshold", Default: "6", Doc: "Identical consecutive tool calls that count as a loop.", Modes: "agent", check: intRange(2, 100)},
	{Env: "MR_ALLOWED_TOOLS", Input: "allowed-tools", Doc: "Extra engine tools the agent may use, comma-separated Claude Code permission rules. `Edit,Write` is what pull requests need: bare file tools are scoped to the checkout, and the gate commits the edits itself. Reading stays limited to the checkout; GitHub writes still only go through the gate. Adding `Bash` gives the agent a shell: see docs/security.md.", Modes: "agent", check: toolList},
	{Env: "MR_SYSTEM_PROMPT_FILE", Input: "system-prompt-file", Doc: "Operator system prompt file, prepended to the agent's prompt.", Modes: "agent"},
	{Env: "MR_ALLOW_PUSH_TO_TARGET", Input: "allow-push-to-target", Default: "false", Doc: "Push PR branches to the target repo instead of the bot's fork.", Modes: "publish", check: boolean},
	{Env: "MR_WRITE_GAP", Input: "write-gap", Default: "1s", Doc: "Least time between two content-creating requests of the publish job (GitHub's secondary limits also cap it at 80/min and 500/h); 0s turns the gap off, the caps stay.", Modes: "publish", check: durRange(0, time.Minute)},
	{Env: "MR_AGENT_RESULT", Input: "agent-result", Doc: "publish: the agent job's result as GitHub reports it (needs.agent.result: success, failure, cancelled); the workflow sets it. A record that says completed while GitHub says otherwise is not believed.", Modes: "publish"},
	{Env: "MR_AGENT_STAGE", Input: "agent-stage", Doc: "publish: the agent step's stage output (started once its settings were read); the workflow sets it. With a failed agent job and no outcome.json, publish reports a storage error naming the missing files.", Modes: "publish"},
	{Env: "MR_ALLOW_WORKFLOW_CHANGES", Input: "allow-workflow-changes", Default: "false", Doc: "Allow PRs whose commits touch anything under .github/ (workflows, local actions, settings).", check: boolean},
	{Env: "MR_MAX_CONTEXT_BYTES", Input: "max-context-bytes", Default: "8388608", Doc: "Largest reassembled context accepted.", Modes: "assemble", check: intRange(1024, 256<<20)},
	{Env: "MR_MAX_BUNDLE_BYTES", Input: "max-bundle-bytes", Default: "52428800", Doc: "Largest PR bundle accepted.", check: intRange(1024, 1<<30)},
	{Env: "MR_BLOCKLIST_PATH", Input: "blocklist-path", Default: contract.BlocklistPath, Doc: "Opt-out list in the control repo (shared with the dispatcher)."},
	{Env: "MR_REPLAY_SCRIPT", Input: "replay-script", Doc: "Replay engine: the scripted session (JSONL).", Modes: "agent"},
	{Env: "MR_CONTEXT_FILE", Input: "context-file", Default: "runs/context.json", Doc: "The context file: written by assemble, read by agent and publish (publish must read the copy from assemble's artifact, never the agent's)."},
	{Env: "MR_CONTEXT_SHA256", Input: "context-sha256", Doc: "agent, publish: SHA-256 of the context file from assemble; the file is refused if it differs.", Modes: "agent,publish", check: sha256Hex},
	{Env: "MR_LOG_ISSUE", Input: "log-issue", Doc: "agent, publish: the run-log issue number from assemble.", Modes: "agent,publish", check: optionalInt},
	{Env: "MR_LOG_ISSUE_NEW", Input: "log-issue-new", Doc: "publish: assemble's log_issue_new output (true when this workflow run opened the log issue). On the run's first attempt publish then posts the session without listing the issue's comments first, and on success updates it without reading its labels. Empty = not known: publish reads them.", Modes: "publish", check: optionalBool},
	{Env: "MR_SHARDED", Input: "sharded", Doc: "publish: assemble's sharded output (false when the context came as one agent_small event). With false publish has no shard refs to delete and does not list them; empty = not known: it lists them.", Modes: "publish", check: optionalBool},
	{Env: "MR_CLAUDE_BIN", Input: "claude-bin", Default: "claude", Doc: "Claude Code executable.", Modes: "agent"},
	{Env: "MR_CODEX_BIN", Input: "codex-bin", Default: "codex", Doc: "OpenAI Codex CLI executable (engine codex; key in OPENAI_API_KEY).", Modes: "agent"},
	{Env: "MR_GEMINI_BIN", Input: "gemini-bin", Default: "gemini", Doc: "Gemini CLI executable (engine gemini; key in GEMINI_API_KEY).", Modes: "agent"},
	{Env: "MR_WORKSPACE", Input: "workspace", Doc: "Where the agent works. With `target-dir` set (as the workflow does), an empty directory the fetched code is checked out into. Without it, plain files and no code: no git runs there, no pull request can be made, and a git checkout (a `.git`) is refused. Defaults to the current directory.", Modes: "agent"},
	{Env: "MR_TARGET_DIR", Input: "target-dir", Doc: "fetch: where the target's code (one shallow pack and its manifest) is written; agent: where it is read from and checked out into the workspace, with the git directory kept outside it. Empty in agent mode: the agent gets no code (see `workspace`).", Modes: "fetch,agent"},
	{Env: "MR_MAX_CHECKOUT_BYTES", Input: "max-checkout-bytes", Default: "209715200", Doc: "Largest fetch of the target's code (one commit, depth 1) accepted; the fetch stops with an error above it.", Modes: "fetch", check: intRange(1024, 4<<30)},
	{Env: "MR_MAX_TREE_BYTES", Input: "max-tree-bytes", Default: "1073741824", Doc: "Largest checkout of the target's code: the sizes of the fetched commit's files added up (what the agent job writes to disk, however well the pack compressed them); fetch refuses a larger one before the agent job starts.", Modes: "fetch", check: intRange(1024, 64<<30)},
	{Env: "MR_MAX_DIFF_BYTES", Input: "max-diff-bytes", Default: "1048576", Doc: "A pull request's diff (read by fetch at the recorded head) is cut at a line end to this many bytes; the agent refuses a larger one. Publish reads it again to check reviews' inline comments. Keep fetch's, agent's and publish's equal.", Modes: "fetch,agent,publish", check: intRange(1024, 64<<20)},
}

// Config is the parsed settings.
type Config struct {
	BotLogin, ControlRepo, APIURL, ServerURL, RunDir string
	Engine, Model                                    string
	MaxTurns                                         int
	Timeout                                          time.Duration
	MaxBudgetUSD                                     float64 // 0 = none
	CommentLimit, IssueLimit, PRLimit                int
	MaxWrites                                        int
	LabelLimit, ReviewComments                       int
	AllowPush                                        bool
	LoopThreshold                                    int
	SystemPromptFile                                 string
	AllowPushToTarget, AllowWorkflowChanges          bool
	MaxContextBytes, MaxBundleBytes                  int
	BlocklistPath, ReplayScript, ClaudeBin           string
	CodexBin, GeminiBin                              string
	Workspace, TargetDir                             string
	MaxCheckoutBytes, MaxDiffBytes                   int
	MaxTreeBytes                                     int64
	ContextFile, ContextSHA256                       string
	LogIssue                                         int // 0 = unknown
	LogIssueNew                                      bool
	Unsharded                                        bool // MR_SHARDED=false: no shard refs
	// ControlIDs are the control repo's ids from the Actions environment
	// when it is the repository the workflow runs in (zero = look them up).
	ControlIDs              policy.RepoIDs
	AllowedTools            []string
	WriteGap                time.Duration
	AgentResult, AgentStage string
}

// Load reads and checks every setting; the error lists every bad variable.
func Load(getenv func(string) string) (*Config, error) {
	v := map[string]string{}
	var problems []string
	for _, s := range Settings {
		val := strings.TrimSpace(getenv(s.Env))
		if val == "" && s.Env == "CONTROL_REPO" {
			val = strings.TrimSpace(getenv("GITHUB_REPOSITORY"))
		}
		if val == "" {
			val = s.Default
		}
		if s.check != nil {
			if err := s.check(val); err != nil {
				name := s.Env
				if s.Input != "" {
					name = "input " + s.Input + " (" + s.Env + ")"
				}
				problems = append(problems, fmt.Sprintf("%s=%q: %v", name, val, err))
			}
		}
		v[s.Env] = val
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("bad settings: %s", strings.Join(problems, "; "))
	}
	atoi := func(k string) int { n, _ := strconv.Atoi(v[k]); return n }
	dur, _ := time.ParseDuration(v["MR_TIMEOUT"])
	bud, _ := strconv.ParseFloat(v["MR_MAX_BUDGET_USD"], 64)
	gap, _ := time.ParseDuration(v["MR_WRITE_GAP"])
	c := &Config{
		BotLogin: strings.TrimPrefix(v["BOT_LOGIN"], "@"), ControlRepo: v["CONTROL_REPO"],
		APIURL: v["GITHUB_API_URL"], ServerURL: strings.TrimSuffix(v["GITHUB_SERVER_URL"], "/"), RunDir: v["MR_RUN_DIR"],
		Engine: v["MR_ENGINE"], Model: v["MR_MODEL"], MaxTurns: atoi("MR_MAX_TURNS"), Timeout: dur, MaxBudgetUSD: bud,
		CommentLimit: atoi("MR_COMMENT_LIMIT"), IssueLimit: atoi("MR_ISSUE_LIMIT"), PRLimit: atoi("MR_PR_LIMIT"),
		MaxWrites:  atoi("MR_MAX_WRITES"),
		LabelLimit: atoi("MR_LABEL_LIMIT"), ReviewComments: atoi("MR_REVIEW_COMMENT_LIMIT"), AllowPush: v["MR_ALLOW_PUSH"] == "true",
		LoopThreshold: atoi("MR_LOOP_THRESHOLD"), SystemPromptFile: v["MR_SYSTEM_PROMPT_FILE"],
		AllowPushToTarget: v["MR_ALLOW_PUSH_TO_TARGET"] == "true", AllowWorkflowChanges: v["MR_ALLOW_WORKFLOW_CHANGES"] == "true",
		MaxContextBytes: atoi("MR_MAX_CONTEXT_BYTES"), MaxBundleBytes: atoi("MR_MAX_BUNDLE_BYTES"),
		BlocklistPath: v["MR_BLOCKLIST_PATH"], ReplayScript: v["MR_REPLAY_SCRIPT"], ClaudeBin: v["MR_CLAUDE_BIN"],
		CodexBin: v["MR_CODEX_BIN"], GeminiBin: v["MR_GEMINI_BIN"],
		Workspace: v["MR_WORKSPACE"], TargetDir: v["MR_TARGET_DIR"], MaxCheckoutBytes: atoi("MR_MAX_CHECKOUT_BYTES"), MaxDiffBytes: atoi("MR_MAX_DIFF_BYTES"),
		MaxTreeBytes: int64(atoi("MR_MAX_TREE_BYTES")),
		ContextFile:  v["MR_CONTEXT_FILE"], ContextSHA256: v["MR_CONTEXT_SHA256"],
		LogIssue: atoi("MR_LOG_ISSUE"), AllowedTools: splitList(v["MR_ALLOWED_TOOLS"]),
		WriteGap:    gap,
		AgentResult: v["MR_AGENT_RESULT"], AgentStage: v["MR_AGENT_STAGE"],
		LogIssueNew: v["MR_LOG_ISSUE_NEW"] == "true", Unsharded: v["MR_SHARDED"] == "false",
	}
	c.ControlIDs = workflowRepoIDs(getenv, c.ControlRepo)
	return c, nil
}

// workflowRepoIDs are the ids Actions gives of the repository the workflow
// runs in, when that is repo; zero when it is another or either id is
// missing or not a positive number (then they are looked up).
func workflowRepoIDs(getenv func(string) string, repo string) policy.RepoIDs {
	if !strings.EqualFold(strings.TrimSpace(getenv("GITHUB_REPOSITORY")), repo) || repo == "" {
		return policy.RepoIDs{}
	}
	id := func(k string) int64 {
		n, err := strconv.ParseInt(strings.TrimSpace(getenv(k)), 10, 64)
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	ids := policy.RepoIDs{Repo: id("GITHUB_REPOSITORY_ID"), Owner: id("GITHUB_REPOSITORY_OWNER_ID")}
	if ids.Repo == 0 || ids.Owner == 0 {
		return policy.RepoIDs{}
	}
	return ids
}

// Ceilings are the operator's policy ceilings, the control repo included
// (the agent never writes there).
func (c *Config) Ceilings() policy.Ceilings {
	return policy.Ceilings{CommentLimit: c.CommentLimit, IssueLimit: c.IssueLimit, PRLimit: c.PRLimit,
		MaxWrites: c.MaxWrites, LabelLimit: c.LabelLimit, ReviewComments: c.ReviewComments, AllowPush: c.AllowPush,
		ControlRepo: c.ControlRepo}
}

func splitList(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// EnvHelp lists the settings a runner mode reads, one line each (variable,
// default, the first sentence of its meaning), for `runner <mode> --help`.
// It is made from Settings, the list Load reads, so help cannot drift.
func EnvHelp(mode string) string {
	var b strings.Builder
	b.WriteString("Settings come from the environment (the action sets them from its inputs):\n")
	for _, s := range Settings {
		if !s.ModeUses(mode) {
			continue
		}
		line := "  " + fmt.Sprintf("%-26s", s.Env) + " " + firstSentence(s.Doc)
		if s.Default != "" {
			line += " (default: " + s.Default + ")"
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// firstSentence is doc up to and including its first ". ".
func firstSentence(doc string) string {
	if i := strings.Index(doc, ". "); i >= 0 {
		return doc[:i+1]
	}
	return doc
}

// MarkdownTable renders Settings for docs/configuration.md.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| action input | variable | default | used by | meaning |\n|---|---|---|---|---|\n")
	for _, s := range Settings {
		def := s.Default
		if def == "" {
			def = "—"
		} else {
			def = "`" + def + "`"
		}
		modes := s.Modes
		if modes == "" {
			modes = "all"
		}
		in := "—"
		if s.Input != "" {
			in = "`" + s.Input + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", in, s.Env, def, modes, s.Doc)
	}
	return b.String()
}
