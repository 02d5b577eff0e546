package main

import (
	"os"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// TestDoctorCommand runs `dispatcher doctor` with the dispatcher's own
// settings: exit 0 and all ✓ on a good setup; exit 1 with a ✗ and its fix
// when ALLOWED_USERS is missing (which other commands refuse as usage).
func TestDoctorCommand(t *testing.T) {
	t.Parallel()
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 1})
	simfixture.Writer(t, sim, "ops/control", "mrbot", "tok", true)
	sim.AddToken("ops-tok", "ops")
	sim.SetTokenScopes("tok", "notifications", "repo")
	wf, err := os.ReadFile("../../examples/control-repo/.github/workflows/mention-runner.yml")
	require.NoError(t, err)
	_, _, err = sim.Client("ops-tok").Repositories.CreateFile(t.Context(), "ops", "control", ".github/workflows/mention-runner.yml",
		&github.RepositoryContentFileOptions{Message: github.String("add workflow"), Content: wf})
	require.NoError(t, err)
	// the release the example pins, as mention-runner's repository holds it
	sim.AddUser("mention-runner")
	sim.AddToken("up-tok", "mention-runner")
	_, err = sim.AddRepo("mention-runner/mention-runner", false)
	require.NoError(t, err)
	up := sim.Client("up-tok")
	for _, p := range []string{".github/workflows/agent-run.yml", "tools/workflow/claude-code/package.json"} {
		b, err := os.ReadFile("../../" + p)
		require.NoError(t, err)
		_, _, err = up.Repositories.CreateFile(t.Context(), "mention-runner", "mention-runner", p, &github.RepositoryContentFileOptions{Message: github.String("add " + p), Content: b})
		require.NoError(t, err)
	}
	head, _, err := up.Git.GetRef(t.Context(), "mention-runner", "mention-runner", "heads/main")
	require.NoError(t, err)
	_, _, err = up.Git.CreateRef(t.Context(), "mention-runner", "mention-runner", &github.Reference{Ref: github.String("refs/tags/v0.1.0"), Object: head.Object})
	require.NoError(t, err)

	// WRITE_GAP=0s: the doctor's probe writes would each wait the 1 s gap
	// (pacing is TestWriteGapSetting's and ghclient's).
	vars := map[string]string{"BOT_LOGIN": "mrbot", "BOT_TOKEN": "tok", "CONTROL_REPO": "ops/control", "ALLOWED_USERS": "alice", "GITHUB_API_URL": base,
		"WRITE_GAP": "0s"}
	code, out, errs := run(t, vars, "doctor")
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "✓ token scopes: notifications, repo")
	assert.Contains(t, out, "All 20 checks passed.")
	assert.Contains(t, out, "✓ engine and Node.js: claude: Claude Code 2.1.332")

	delete(vars, "ALLOWED_USERS")
	code, out, errs = run(t, vars, "doctor")
	assert.Equal(t, 1, code, out+errs)
	assert.Contains(t, out, "✗ ALLOWED_USERS: not set")
	assert.Contains(t, out, "    fix: set the repository variable (or environment variable) ALLOWED_USERS")
	assert.Contains(t, out, "1 of 20 checks failed.")
}
