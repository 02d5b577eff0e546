package githubsim

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
)

// world is a started simulator with users alice (owner of alice/app, public,
// and alice/secret, private), bot (write on both) and mallory (no grants),
// org acme (admin alice) with private acme/control.
type world struct {
	sim  *Sim
	base string
	gh   map[string]*github.Client
	anon *github.Client
	now  *fakeclock.Clock
}

func newWorld(t testing.TB) *world {
	t.Helper()
	clock := fakeclock.New(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))
	sim, err := New(Options{Seed: 7, Now: clock.Now, Logf: t.Logf})
	require.NoError(t, err)
	base, err := sim.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sim.Close()) })
	w := &world{sim: sim, base: base, gh: map[string]*github.Client{}, now: clock}
	for _, u := range []string{"alice", "bot", "mallory"} {
		sim.AddUser(u)
		sim.AddToken("tok-"+u, u)
		w.gh[u] = w.client("tok-" + u)
	}
	w.anon = w.client("")
	sim.AddOrg("acme", "alice")
	for _, r := range []struct {
		name    string
		private bool
	}{{"alice/app", false}, {"alice/secret", true}, {"acme/control", true}} {
		_, err := sim.AddRepo(r.name, r.private)
		require.NoError(t, err)
		sim.SetPermission(r.name, "bot", "write")
	}
	return w
}

func (w *world) client(token string) *github.Client {
	c := github.NewClient(&http.Client{Timeout: 20 * time.Second})
	if token != "" {
		c = c.WithAuthToken(token)
	}
	u, _ := url.Parse(w.base)
	c.BaseURL = u
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// statusOf returns the HTTP status carried by a go-github error (0 if none).
func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) && rl.Response != nil {
		return rl.Response.StatusCode
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) && ab.Response != nil {
		return ab.Response.StatusCode
	}
	return 0
}
