package threadctx

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// pushFile commits path=content on branch (created from main when new)
// through the REST API and returns the new head sha.
func pushFile(t *testing.T, c *github.Client, branch, path, content string) string {
	t.Helper()
	ctx := context.Background()
	if _, _, err := c.Git.GetRef(ctx, "alice", "app", "heads/"+branch); err != nil {
		main, _, err := c.Git.GetRef(ctx, "alice", "app", "heads/main")
		require.NoError(t, err)
		_, _, err = c.Git.CreateRef(ctx, "alice", "app", &github.Reference{Ref: github.String("refs/heads/" + branch), Object: main.Object})
		require.NoError(t, err)
	}
	res, _, err := c.Repositories.CreateFile(ctx, "alice", "app", path, &github.RepositoryContentFileOptions{
		Message: github.String("add " + path), Content: []byte(content), Branch: github.String(branch)})
	require.NoError(t, err)
	return res.Commit.GetSHA()
}

func TestFetchDiffPinnedToHead(t *testing.T) {
	sim, _ := simfixture.Start(t, githubsim.Options{})
	simfixture.Writer(t, sim, "alice/app", "alice", "tok", false)
	c := sim.Client("tok")
	ctx := context.Background()
	first := pushFile(t, c, "feature", "a.txt", "one\n")
	second := pushFile(t, c, "feature", "b.txt", "two\n")

	d, err := FetchDiff(ctx, c, "alice/app", "main", first, 0)
	require.NoError(t, err)
	assert.Contains(t, d.Text, "a.txt")
	assert.NotContains(t, d.Text, "b.txt", "the diff at the recorded head, not the branch's newer tip")
	assert.False(t, d.Truncated)
	assert.Equal(t, int64(len(d.Text)), d.Total)

	d, err = FetchDiff(ctx, c, "alice/app", "main", second, 0)
	require.NoError(t, err)
	assert.Contains(t, d.Text, "b.txt")

	// A base branch with a slash (escaped in the path, as go-github does).
	pushFile(t, c, "release/1", "r.txt", "r\n")
	d2, err := FetchDiff(ctx, c, "alice/app", "release/1", second, 0)
	require.NoError(t, err)
	assert.Contains(t, d2.Text, "b.txt")

	// Capped: a prefix cut at a line end, the whole size recorded.
	small, err := FetchDiff(ctx, c, "alice/app", "main", second, 40)
	require.NoError(t, err)
	assert.True(t, small.Truncated)
	assert.Equal(t, d.Total, small.Total)
	assert.True(t, strings.HasPrefix(d.Text, small.Text) && strings.HasSuffix(small.Text, "\n"))
	assert.LessOrEqual(t, len(small.Text), 40)
}

// A head the server cannot diff is recorded, not an error (the agent works
// from the code); a refusal of the token is an error; so is bad input.
func TestFetchDiffRefusals(t *testing.T) {
	sim, _ := simfixture.Start(t, githubsim.Options{})
	simfixture.Writer(t, sim, "alice/app", "alice", "tok", false)
	sim.AddUser("eve")
	sim.AddToken("eve-tok", "eve")
	_, err := sim.AddRepo("alice/secret", true)
	require.NoError(t, err)
	ctx := context.Background()

	d, err := FetchDiff(ctx, sim.Client("tok"), "alice/app", "main", strings.Repeat("a", 40), 0)
	require.NoError(t, err)
	assert.Equal(t, "404 Not Found", d.Unavailable)
	assert.Empty(t, d.Text)

	_, err = FetchDiff(ctx, sim.Client("bad-token"), "alice/app", "main", strings.Repeat("a", 40), 0)
	var ge *github.ErrorResponse
	require.ErrorAs(t, err, &ge, "a token the server refuses")
	assert.Equal(t, 401, ge.Response.StatusCode)

	_, err = FetchDiff(ctx, sim.Client("tok"), "app", "main", "x", 0)
	assert.ErrorContains(t, err, "owner/name")
}
