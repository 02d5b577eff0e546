// Package simfixture starts the GitHub simulator (internal/testrig/githubsim) for a
// test and seeds what most tests need, so the fixtures of every package
// begin the same way.
package simfixture

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// Start runs a simulator for the test and returns it with its base URL; it
// is closed when the test ends.
func Start(t testing.TB, o githubsim.Options) (*githubsim.Sim, string) {
	t.Helper()
	sim, err := githubsim.New(o)
	require.NoError(t, err)
	base, err := sim.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	return sim, base
}

// Writer adds the accounts of repo's owner and of user (with token) and
// the repository (private when private), with user holding write
// permission on it: a control repo and the bot that writes to it.
func Writer(t testing.TB, sim *githubsim.Sim, repo, user, token string, private bool) {
	t.Helper()
	owner, _, _ := strings.Cut(repo, "/")
	sim.AddUser(owner)
	sim.AddUser(user)
	sim.AddToken(token, user)
	_, err := sim.AddRepo(repo, private)
	require.NoError(t, err)
	sim.SetPermission(repo, user, "write")
}
