package shardstore

import (
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const control = "acme/control"

type fixture struct {
	sim   *githubsim.Sim
	clock *fakeclock.Clock
	gh    *github.Client
	store *Store
}

func newFixture(t testing.TB) *fixture { return newFixtureMode(t, false) }

// newFixtureMode is newFixture, its store pushing when push is set.
func newFixtureMode(t testing.TB, push bool) *fixture {
	t.Helper()
	clk := fakeclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base := simfixture.Start(t, githubsim.Options{Now: clk.Now})
	sim.AddOrg("acme")
	sim.AddUser("mr-bot")
	sim.AddToken("tok", "mr-bot")
	_, err := sim.AddRepo(control, true)
	require.NoError(t, err)
	sim.SetPermission(control, "mr-bot", "write")
	gh, err := ghclient.New(ghclient.Options{BaseURL: base, Token: "tok", RetryUnsafe: true, MaxRetries: -1})
	require.NoError(t, err)
	st, err := New(gh, control, clk.Now)
	require.NoError(t, err)
	if push {
		st.Push, err = refpush.New(gh.Client(), base, "tok")
		require.NoError(t, err)
	}
	return &fixture{sim: sim, clock: clk, gh: gh, store: st}
}

// eachMode runs test with fixtures writing through the REST API, then
// through pushes: the same behaviour either way.
func eachMode(t *testing.T, test func(t *testing.T, newFixture func(testing.TB) *fixture)) {
	for _, push := range []bool{false, true} {
		t.Run(map[bool]string{false: "rest", true: "push"}[push], func(t *testing.T) {
			test(t, func(t testing.TB) *fixture { return newFixtureMode(t, push) })
		})
	}
}
