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

	// WRITE_GAP=0s: the doctor's probe writes would each wait the 1 s gap
	// (pacing is TestWriteGapSetting's and ghclient's).
	vars := map[string]string{"BOT_LOGIN": "mrbot", "BOT_TOKEN": "tok", "CONTROL_REPO": "ops/control", "ALLOWED_USERS": "alice", "GITHUB_API_URL": base,
		"WRITE_GAP": "0s"}
	code, out, errs := run(t, vars, "doctor")
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "✓ token scopes: notifications, repo")
	assert.Contains(t, out, "All 13 checks passed.")

	delete(vars, "ALLOWED_USERS")
	code, out, errs = run(t, vars, "doctor")
	assert.Equal(t, 1, code, out+errs)
	assert.Contains(t, out, "✗ ALLOWED_USERS: not set")
	assert.Contains(t, out, "    fix: set the repository variable (or environment variable) ALLOWED_USERS")
	assert.Contains(t, out, "1 of 13 checks failed.")
}
