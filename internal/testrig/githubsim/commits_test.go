package githubsim

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const emptyTreeSHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// TestRepoCommitByRef: GET /repos/{o}/{r}/commits/{ref} resolves a sha, a
// branch, heads/…, refs/heads/… and a ref outside heads and tags (in full,
// or without "refs/"),
// and answers the ref's commit and message in one response; an unknown
// ref is 422, as GitHub answers it.
func TestRepoCommitByRef(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	bot := w.gh["bot"]
	root, _, err := bot.Git.CreateCommit(ctx, "acme", "control", &github.Commit{Message: github.String("root"), Tree: &github.Tree{SHA: github.String(emptyTreeSHA)}}, nil)
	require.NoError(t, err)
	child, _, err := bot.Git.CreateCommit(ctx, "acme", "control", &github.Commit{Message: github.String("ledger\n\n{}"), Tree: &github.Tree{SHA: github.String(emptyTreeSHA)},
		Parents: []*github.Commit{{SHA: root.SHA}}}, nil)
	require.NoError(t, err)
	_, _, err = bot.Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String("refs/mention-runner/pace/bot.7"), Object: &github.GitObject{SHA: child.SHA}})
	require.NoError(t, err)
	main, _, err := bot.Git.GetRef(ctx, "acme", "control", "heads/main")
	require.NoError(t, err)

	for _, tc := range []struct{ ref, sha string }{
		{"refs/mention-runner/pace/bot.7", child.GetSHA()},
		{"mention-runner/pace/bot.7", child.GetSHA()},
		{"refs/heads/main", main.GetObject().GetSHA()},
		{child.GetSHA(), child.GetSHA()},
		{"main", main.GetObject().GetSHA()},
		{"heads/main", main.GetObject().GetSHA()},
	} {
		c, _, err := bot.Repositories.GetCommit(ctx, "acme", "control", tc.ref, nil)
		require.NoError(t, err, tc.ref)
		assert.Equal(t, tc.sha, c.GetSHA(), tc.ref)
	}
	c, _, err := bot.Repositories.GetCommit(ctx, "acme", "control", "refs/mention-runner/pace/bot.7", nil)
	require.NoError(t, err)
	assert.Equal(t, "ledger\n\n{}", c.GetCommit().GetMessage())
	require.Len(t, c.Parents, 1)
	assert.Equal(t, root.GetSHA(), c.Parents[0].GetSHA())
	assert.Equal(t, emptyTreeSHA, c.GetCommit().GetTree().GetSHA())

	_, _, err = bot.Repositories.GetCommit(ctx, "acme", "control", "refs/mention-runner/pace/bot.8", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "no such ref")
	_, _, err = bot.Repositories.GetCommit(ctx, "acme", "nope", "main", nil)
	assert.Equal(t, http.StatusNotFound, statusOf(err), "no such repository")
}
