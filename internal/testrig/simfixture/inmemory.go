package simfixture

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// InMemory returns a simulator that is served without a listener: its
// base URL and a RoundTripper that calls the simulator's handler in the
// caller's goroutine (githubsim.InMemory). Inside a testing/synctest
// bubble requests made together then start at the same instant however
// busy the machine is: round trips counted from the log
// (githubsim.RoundTrips) are exact, not a race between the latency and
// the scheduler.
func InMemory(t testing.TB, o githubsim.Options) (*githubsim.Sim, string, http.RoundTripper) {
	t.Helper()
	sim, err := githubsim.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	return sim, sim.URL(), githubsim.InMemory(sim.Handler())
}
