package hostile

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const (
	proj     = "alice/proj"
	botToken = "bot-token"
)

// world is a started simulator with alice/proj and a client for the bot.
type world struct {
	sim *githubsim.Sim
	gh  *github.Client
}

func newWorld(t *testing.T) *world {
	t.Helper()
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 8})
	for _, u := range []string{Bot, "alice", "mallory"} {
		sim.AddUser(u)
	}
	_, err := sim.AddRepo(proj, false)
	require.NoError(t, err)
	sim.AddToken(botToken, Bot)
	gh, err := ghclient.New(ghclient.Options{BaseURL: base, Token: botToken, MaxRetries: 1, RequestTimeout: 30 * time.Second,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	return &world{sim: sim, gh: gh}
}

func testCtx(t *testing.T) context.Context {
	// A hang guard only: the 10,000-comment thread took 190 s with the race
	// detector and two CPU hogs on a loaded 2-core machine (19 s normally).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// post comments body on issue n as the bot and returns the HTTP status.
func (w *world) post(t *testing.T, n int, body string) int {
	t.Helper()
	_, resp, err := w.gh.Issues.CreateComment(testCtx(t), "alice", "proj", n, &github.IssueComment{Body: github.String(body)})
	if resp == nil {
		require.NoError(t, err)
		return 0
	}
	if err == nil {
		return resp.StatusCode
	}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
		t.Fatalf("error with status %d: %v", resp.StatusCode, err)
	}
	return resp.StatusCode
}
