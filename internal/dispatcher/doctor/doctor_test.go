package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// example is the control-repo workflow README tells users to copy.
func example() string {
	b, err := os.ReadFile("../../../examples/control-repo/.github/workflows/mention-runner.yml")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// world is a good setup: bot "bot" with a classic token, control repo
// op/agent where the bot has write, the example workflow committed.
type world struct {
	sim *githubsim.Sim
	cfg Config
}

func newWorld(t *testing.T) *world {
	t.Helper()
	sim, _ := simfixture.Start(t, githubsim.Options{Seed: 1})
	simfixture.Writer(t, sim, "op/agent", "bot", "bot-tok", false)
	sim.AddToken("op-tok", "op")
	sim.SetTokenScopes("bot-tok", "notifications", "public_repo")
	push, err := refpush.New(nil, sim.URL(), "bot-tok")
	require.NoError(t, err)
	w := &world{sim: sim, cfg: Config{Bot: "bot", Control: "op/agent", GitHub: sim.Client("bot-tok"), AllowedUsers: "alice, bob", AllowedSet: true, Push: push}}
	w.put(t, ".github/workflows/mention-runner.yml", example())
	w.release(t, exampleRef(example()))
	return w
}

// release publishes this checkout's agent-run.yml and engine lockfile
// directories as mention-runner/mention-runner at tag.
func (w *world) release(t *testing.T, tag string) {
	t.Helper()
	ctx := context.Background()
	w.sim.AddUser("mention-runner")
	w.sim.AddToken("upstream-tok", "mention-runner")
	_, err := w.sim.AddRepo("mention-runner/mention-runner", false)
	require.NoError(t, err)
	gh := w.sim.Client("upstream-tok")
	for _, p := range []string{".github/workflows/agent-run.yml", "tools/workflow/claude-code/package.json", "tools/workflow/codex/package.json", "tools/workflow/gemini-cli/package.json"} {
		b, err := os.ReadFile("../../../" + p)
		require.NoError(t, err)
		_, _, err = gh.Repositories.CreateFile(ctx, "mention-runner", "mention-runner", p, &github.RepositoryContentFileOptions{
			Message: github.String("add " + p), Content: b})
		require.NoError(t, err)
	}
	head, _, err := gh.Git.GetRef(ctx, "mention-runner", "mention-runner", "heads/main")
	require.NoError(t, err)
	_, _, err = gh.Git.CreateRef(ctx, "mention-runner", "mention-runner", &github.Reference{Ref: github.String("refs/tags/" + tag), Object: &github.GitObject{SHA: head.Object.SHA}})
	require.NoError(t, err)
}

// put commits a file to op/agent as the owner.
func (w *world) put(t *testing.T, path, content string) {
	t.Helper()
	ctx := context.Background()
	gh := w.sim.Client("op-tok")
	var sha *string
	if fc, _, _, err := gh.Repositories.GetContents(ctx, "op", "agent", path, nil); err == nil && fc != nil {
		sha = fc.SHA
	}
	_, _, err := gh.Repositories.CreateFile(ctx, "op", "agent", path, &github.RepositoryContentFileOptions{
		Message: github.String("set " + path), Content: []byte(content), SHA: sha})
	require.NoError(t, err)
}

func (w *world) run(t *testing.T) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Run(ctx, w.cfg)
}

func find(t *testing.T, rep Report, name string) Check {
	t.Helper()
	for _, c := range rep {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, rep)
	return Check{}
}

func TestGoodSetupAllPass(t *testing.T) {
	w := newWorld(t)
	rep := w.run(t)
	var out bytes.Buffer
	require.NoError(t, rep.Print(&out))
	assert.Zero(t, rep.Failed(), out.String())
	assert.NotContains(t, out.String(), "✗")
	assert.Contains(t, out.String(), "All 20 checks passed (2 with a warning).")
	assert.Contains(t, out.String(), "! scheduled runs (60-day rule): public repository")
	assert.Contains(t, out.String(), "✓ pinned release exists: "+exampleRef(example()))
	assert.Contains(t, out.String(), "✓ engine and Node.js: claude: Claude Code 2.1.332 (tools/workflow/claude-code/package.json at "+exampleRef(example())+"); on Node.js 24")
	assert.Contains(t, out.String(), "✓ bot login matches the token: bot")
	// The probes leave nothing behind and start nothing.
	assert.Empty(t, w.sim.Refs("op/agent", "refs/mention-runner/"))
	ds := w.sim.Dispatches("op/agent")
	require.Len(t, ds, 1)
	assert.Equal(t, ProbeEventType, ds[0].EventType)
}

func TestEachMisconfiguration(t *testing.T) {
	workflow := func(body string) func(*testing.T, *world) {
		return func(t *testing.T, w *world) { w.put(t, ".github/workflows/mention-runner.yml", body) }
	}
	pinned := func(uses, ref string) string {
		return strings.NewReplacer("agent-run.yml@"+exampleRef(example()), "agent-run.yml@"+uses,
			"runner-ref: "+exampleRef(example()), "runner-ref: "+ref).Replace(example())
	}
	cases := []struct {
		name   string
		setup  func(*testing.T, *world)
		failed []string // checks that must fail
		detail string   // in the first failed check's detail
		fix    string   // in its fix
	}{
		{"bad token", func(t *testing.T, w *world) { w.cfg.GitHub = w.sim.Client("nope") },
			[]string{"token valid", "token scopes", "bot login matches the token", "notifications readable", "control repo reachable"}, "401 Bad credentials", "classic personal access token"},
		{"fine-grained token", func(t *testing.T, w *world) { w.sim.AddToken("fg", "bot"); w.cfg.GitHub = w.sim.Client("fg") },
			[]string{"token scopes"}, "not a classic token", "Tokens (classic)"},
		{"no notifications scope", func(t *testing.T, w *world) { w.sim.SetTokenScopes("bot-tok", "public_repo") },
			[]string{"token scopes", "notifications readable"}, "missing notifications", "tick notifications"},
		{"no repo scope", func(t *testing.T, w *world) { w.sim.SetTokenScopes("bot-tok", "notifications") },
			[]string{"token scopes"}, "missing repo (or public_repo)", "tick repo (or public_repo)"},
		{"login mismatch", func(t *testing.T, w *world) { w.cfg.Bot = "WhiteElephantIsNotARobot" },
			[]string{"bot login matches the token"}, "BOT_LOGIN is WhiteElephantIsNotARobot but the token belongs to bot", "set BOT_LOGIN to bot"},
		{"control repo missing", func(t *testing.T, w *world) { w.cfg.Control = "op/nope" },
			[]string{"control repo reachable", "control repo writable (refs, contents)", "control repo issues", "control repo refs writable", "control repo refs pushable", "opt-out list readable", "workflow", "dispatch allowed"},
			"CONTROL_REPO=op/nope: no such repository", "check CONTROL_REPO"},
		{"control repo owner mistyped", func(t *testing.T, w *world) { w.cfg.Control = "opp/agent" },
			[]string{"control repo reachable"}, "CONTROL_REPO=opp/agent: there is no account opp", "set CONTROL_REPO"},
		{"pinned release missing", workflow(pinned("v9.9.9", "v9.9.9")),
			[]string{"pinned release exists", "engine and Node.js"}, "pins v9.9.9, which mention-runner/mention-runner does not have", "pin a release that exists"},
		{"pinned commit missing", workflow(pinned(strings.Repeat("a", 40), strings.Repeat("a", 40))),
			[]string{"pinned release exists"}, "does not have", "pin a release that exists"},
		{"bot only reads", func(t *testing.T, w *world) { w.sim.SetPermission("op/agent", "bot", "read") },
			[]string{"control repo writable (refs, contents)", "control repo issues", "control repo refs writable", "control repo refs pushable", "dispatch allowed"}, "the account has read", "Write role"},

		{"corrupt opt-out list", func(t *testing.T, w *world) { w.put(t, ".mention-runner/blocklist.json", "{not json") },
			[]string{"opt-out list readable"}, ".mention-runner/blocklist.json", "restore"},
		{"no workflow", func(t *testing.T, w *world) {
			w.cfg.Control = "op/empty"
			_, err := w.sim.AddRepo("op/empty", false)
			require.NoError(t, err)
			w.sim.SetPermission("op/empty", "bot", "write")
		}, []string{"workflow"}, "no .github/workflows", "examples/control-repo"},
		{"workflow misses a type", workflow(strings.Replace(example(), "agent_small, agent_shard", "agent_small", 1)),
			[]string{"workflow"}, "missing agent_shard", "types: [agent_small, agent_shard]"},
		{"workflow takes every dispatch", workflow("on: repository_dispatch\njobs: {}\n"),
			[]string{"workflow", "dispatch allowed"}, "runs on every repository_dispatch type", "types: [agent_small, agent_shard]"},
		{"runner-ref differs from the pin", workflow(pinned("v1.2.3", "main")),
			[]string{"workflow"}, `passes runner-ref "main"`, "runner-ref: v1.2.3"},
		{"pinned to a movable ref", workflow(pinned("v1", "v1")),
			[]string{"workflow"}, "a ref that can move", "commit sha"},
		{"ALLOWED_USERS unset", func(t *testing.T, w *world) { w.cfg.AllowedSet, w.cfg.AllowedUsers = false, "" },
			[]string{"ALLOWED_USERS"}, "not set", "ALLOWED_USERS"},
		{"ALLOWED_USERS empty", func(t *testing.T, w *world) { w.cfg.AllowedUsers = " , " },
			[]string{"ALLOWED_USERS"}, "no one can trigger", "or * for anyone"},
		{"settings missing", func(t *testing.T, w *world) { w.cfg.Missing = []string{"CONTROL_REPO (--control)"}; w.cfg.Control = "" },
			[]string{"settings", "control repo reachable"}, "missing CONTROL_REPO", "repository variables"},
		{"no token at all", func(t *testing.T, w *world) { w.cfg.GitHub = nil },
			[]string{"token valid", "control repo reachable", "dispatch allowed"}, "no BOT_TOKEN", "BOT_TOKEN secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(t, w)
			rep := w.run(t)
			var out bytes.Buffer
			require.NoError(t, rep.Print(&out))
			var failed []string
			for _, c := range rep {
				if !c.OK {
					failed = append(failed, c.Name)
					assert.NotEmpty(t, c.Fix, "check %q failed without a fix", c.Name)
				}
			}
			assert.Subset(t, failed, tc.failed, out.String())
			first := find(t, rep, tc.failed[0])
			assert.Contains(t, first.Detail, tc.detail, out.String())
			assert.Contains(t, first.Fix, tc.fix, out.String())
			assert.Contains(t, out.String(), "✗ "+tc.failed[0])
			assert.Contains(t, out.String(), "    fix: ")
			assert.Len(t, rep, 20, "every report has the same lines")
		})
	}
}

// exampleRef is the ref the example workflow pins.
func exampleRef(s string) string {
	_, after, _ := strings.Cut(s, "agent-run.yml@")
	ref, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(ref)
}

func TestParseWorkflowForms(t *testing.T) {
	cases := []struct {
		yaml  string
		found bool
		all   bool
		types []string
	}{
		{"on: push\n", false, false, nil},
		{"on: [push, repository_dispatch]\n", true, true, nil},
		{"on:\n  repository_dispatch:\n", true, true, nil},
		{"on:\n  repository_dispatch:\n    types: agent_small\n", true, false, []string{"agent_small"}},
		{"on:\n  repository_dispatch:\n    types: [agent_small, agent_shard]\n", true, false, []string{"agent_small", "agent_shard"}},
		{"on:\n  workflow_dispatch:\n", false, false, nil},
	}
	for _, tc := range cases {
		f, err := parseWorkflow("w.yml", []byte(tc.yaml))
		require.NoError(t, err, tc.yaml)
		if !tc.found {
			assert.Nil(t, f, tc.yaml)
			continue
		}
		require.NotNil(t, f, tc.yaml)
		assert.Equal(t, tc.all, f.allTypes, tc.yaml)
		assert.Equal(t, tc.types, f.types, tc.yaml)
	}
	_, err := parseWorkflow("w.yml", []byte("on: [\n"))
	assert.ErrorContains(t, err, "w.yml is not valid YAML")
}

func TestPinnedRef(t *testing.T) {
	for ref, want := range map[string]bool{
		"v1.2.3": true, "v0.1.0-rc.1": true, strings.Repeat("a", 40): true,
		"v1": false, "v1.2": false, "main": false, "": false, strings.Repeat("a", 39): false, "latest": false,
	} {
		assert.Equal(t, want, PinnedRef(ref), ref)
	}
}

// TestLeftoverProbesSwept: a probe ref an earlier doctor left behind (killed
// between creating and deleting it) is deleted once it is an hour old; a
// younger one (another doctor running now) is left alone.
func TestLeftoverProbesSwept(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	gh := w.sim.Client("op-tok")
	repo, _, err := gh.Repositories.Get(ctx, "op", "agent")
	require.NoError(t, err)
	head, _, err := gh.Git.GetRef(ctx, "op", "agent", "heads/"+repo.GetDefaultBranch())
	require.NoError(t, err)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := fmt.Sprintf("refs/mention-runner/doctor/%d-7f0c", t0.Add(-2*time.Hour).Unix())
	young := fmt.Sprintf("refs/mention-runner/doctor/%d-a1b2", t0.Add(-time.Minute).Unix())
	legacy := "refs/mention-runner/doctor/0b6e2f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	for _, ref := range []string{old, young, legacy} {
		_, _, err := gh.Git.CreateRef(ctx, "op", "agent", &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: head.Object.SHA}})
		require.NoError(t, err)
	}
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return t0 }
	rep := w.run(t)
	assert.True(t, find(t, rep, "control repo refs writable").OK)
	assert.Equal(t, []string{young}, w.sim.Refs("op/agent", "refs/mention-runner/"))
}

// TestEngineAndNodeReported: doctor names the engine CLI and Node.js a
// run installs: the pinned release's lockfile and node-version default,
// or what the control-repo workflow passes instead.
func TestEngineAndNodeReported(t *testing.T) {
	cases := []struct {
		name, with, want string
	}{
		{"defaults", "", "claude: Claude Code 2.1.332 (tools/workflow/claude-code/package.json at v0.1.0); on Node.js 24"},
		{"codex", "      engine: codex\n", "codex: Codex CLI 0.171.0 (tools/workflow/codex/package.json at v0.1.0); on Node.js 24"},
		{"a version and Node set by the workflow", "      engine: gemini\n      gemini-cli-version: 0.60.0\n      node-version: \"22\"\n",
			"gemini: Gemini CLI 0.60.0 (set by .github/workflows/mention-runner.yml); on Node.js 22"},
		{"engine from a variable", "      engine: ${{ vars.ENGINE || 'claude' }}\n", "engine ${{ vars.ENGINE || 'claude' }}; claude: Claude Code 2.1.332"},
		{"replay", "      engine: replay\n", "replay: no engine CLI"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			require.Equal(t, "v0.1.0", exampleRef(example()))
			w.put(t, ".github/workflows/mention-runner.yml", strings.Replace(example(), "      runner-ref: v0.1.0\n", "      runner-ref: v0.1.0\n"+tc.with, 1))
			rep := w.run(t)
			c := find(t, rep, "engine and Node.js")
			assert.True(t, c.OK, c.Detail)
			assert.Contains(t, c.Detail, tc.want)
		})
	}
}

// TestPrivateControlRepoNoScheduleWarning: the 60-day rule is GitHub's
// for public repositories only.
func TestPrivateControlRepoNoScheduleWarning(t *testing.T) {
	sim, _ := simfixture.Start(t, githubsim.Options{Seed: 1})
	simfixture.Writer(t, sim, "op/agent", "bot", "bot-tok", true)
	sim.AddToken("op-tok", "op")
	sim.SetTokenScopes("bot-tok", "notifications", "repo")
	push, err := refpush.New(nil, sim.URL(), "bot-tok")
	require.NoError(t, err)
	w := &world{sim: sim, cfg: Config{Bot: "bot", Control: "op/agent", GitHub: sim.Client("bot-tok"), AllowedUsers: "*", AllowedSet: true, Push: push}}
	w.put(t, ".github/workflows/mention-runner.yml", example())
	w.release(t, exampleRef(example()))
	rep := w.run(t)
	c := find(t, rep, "scheduled runs (60-day rule)")
	assert.True(t, c.OK)
	assert.False(t, c.Warn)
	assert.Contains(t, c.Detail, "private")
	assert.Zero(t, rep.Failed())
	c = find(t, rep, "private repositories' data")
	assert.True(t, c.OK)
	assert.False(t, c.Warn)
}

// TestDoctorWarnsPublicControlForPrivateTargets: a public control repo
// would publish a private repository's thread, code and session on its log
// issue and artifacts; doctor says so and how to fix it.
func TestDoctorWarnsPublicControlForPrivateTargets(t *testing.T) {
	w := newWorld(t)
	rep := w.run(t)
	c := find(t, rep, "private repositories' data")
	assert.True(t, c.Warn)
	assert.Contains(t, c.Detail, "public control repository")
	assert.Contains(t, c.Fix, "make the control repo private")
}

// TestPushesRefusedWarns: pushes refused is a warning, not a failure: the
// writers fall back to the REST API, at two writes a state.
func TestPushesRefusedWarns(t *testing.T) {
	w := newWorld(t)
	w.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/op/agent.git/git-receive-pack", Kind: githubsim.FaultText, Rate: 1})
	rep := w.run(t)
	c := find(t, rep, "control repo refs pushable")
	assert.True(t, c.OK)
	assert.True(t, c.Warn)
	assert.Contains(t, c.Detail, "by a push failed: refpush: push answered 403")
	assert.Contains(t, c.Fix, "REST API instead, two writes a state")
}

// TestSweepMarkerReported: doctor says whether a dispatcher sweeps old
// claims and job states (the sweep marker), warns when none has for two
// days, and fails on a marker that is not a state commit (never
// overwritten, it would keep the prepare jobs' fallback sweep on).
func TestSweepMarkerReported(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mark := func(at time.Time) func(*testing.T, *world) {
		return func(t *testing.T, w *world) {
			push, err := refpush.New(nil, w.sim.URL(), "op-tok")
			require.NoError(t, err)
			st, err := refstate.New(w.sim.Client("op-tok"), "op/agent", func() time.Time { return at })
			require.NoError(t, err)
			st.Push = push
			require.NoError(t, st.MarkShared(context.Background(), contract.SweepMarkerRef, contract.SweepMarkerStatus, ""))
		}
	}
	for _, tc := range []struct {
		name        string
		setup       func(*testing.T, *world)
		ok, warn    bool
		detail, fix string
	}{
		{"never swept", func(*testing.T, *world) {}, true, false, "no dispatcher has swept yet", ""},
		{"swept an hour ago", mark(t0.Add(-time.Hour)), true, false, "a dispatcher swept at 2026-03-01T11:00:00Z", ""},
		{"swept three days ago", mark(t0.Add(-72 * time.Hour)), true, true, "72h0m0s ago", "run a dispatcher that sweeps"},
		{"not a state commit", func(t *testing.T, w *world) {
			gh := w.sim.Client("op-tok")
			head, _, err := gh.Git.GetRef(context.Background(), "op", "agent", "heads/main")
			require.NoError(t, err)
			_, _, err = gh.Git.CreateRef(context.Background(), "op", "agent", &github.Reference{Ref: github.String(contract.SweepMarkerRef), Object: &github.GitObject{SHA: head.Object.SHA}})
			require.NoError(t, err)
		}, false, false, "is not a state commit", "git push origin :" + contract.SweepMarkerRef},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(t, w)
			defer func(f func() time.Time) { now = f }(now)
			now = func() time.Time { return t0 }
			c := find(t, w.run(t), "old state swept")
			assert.Equal(t, tc.ok, c.OK, c.Detail)
			assert.Equal(t, tc.warn, c.Warn, c.Detail)
			assert.Contains(t, c.Detail, tc.detail)
			assert.Contains(t, c.Fix, tc.fix)
		})
	}
}
