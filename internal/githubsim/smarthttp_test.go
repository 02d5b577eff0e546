package githubsim

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitCmd runs the real git client against the simulator.
func gitCmd(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func authURL(base, token, repo string) string {
	return strings.Replace(base, "http://", "http://x-access-token:"+token+"@", 1) + repo + ".git"
}

func TestSmartHTTPCloneCommitPush(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	tmp := t.TempDir()

	// Public: anonymous clone works, anonymous push is refused.
	out, err := gitCmd(t, tmp, "clone", "--quiet", w.base+"alice/app.git", "anon")
	require.NoError(t, err, out)
	assert.FileExists(t, filepath.Join(tmp, "anon", "README.md"))

	// Private: no token → 401 (git reports authentication failure), bad token → 401,
	// stranger → not found, collaborator → works.
	out, err = gitCmd(t, tmp, "clone", "--quiet", w.base+"alice/secret.git", "nope")
	require.Error(t, err, out)
	_, err = gitCmd(t, tmp, "clone", "--quiet", authURL(w.base, "bad", "alice/secret"), "bad")
	require.Error(t, err)
	out, err = gitCmd(t, tmp, "clone", "--quiet", authURL(w.base, "tok-mallory", "alice/secret"), "stranger")
	require.Error(t, err)
	assert.Contains(t, out, "not found", out)
	out, err = gitCmd(t, tmp, "clone", "--quiet", authURL(w.base, "tok-bot", "alice/secret"), "work")
	require.NoError(t, err, out)

	work := filepath.Join(tmp, "work")
	require.NoError(t, os.WriteFile(filepath.Join(work, "fix.txt"), []byte("fixed\n"), 0o644))
	for _, args := range [][]string{{"checkout", "-q", "-b", "bot/fix"}, {"add", "fix.txt"}, {"commit", "-q", "-m", "Fix it"}} {
		out, err := gitCmd(t, work, args...)
		require.NoError(t, err, out)
	}
	out, err = gitCmd(t, work, "push", "--quiet", "origin", "bot/fix")
	require.NoError(t, err, out)
	head, err := gitCmd(t, work, "rev-parse", "HEAD")
	require.NoError(t, err)
	head = strings.TrimSpace(head)

	// The pushed commit is visible through the git data API and usable as a PR head.
	ref, _, err := w.gh["bot"].Git.GetRef(ctx, "alice", "secret", "heads/bot/fix")
	require.NoError(t, err)
	assert.Equal(t, head, ref.GetObject().GetSHA())
	c, _, err := w.gh["bot"].Git.GetCommit(ctx, "alice", "secret", head)
	require.NoError(t, err)
	assert.Equal(t, "Fix it\n", c.GetMessage())
	pr, _, err := w.gh["bot"].PullRequests.Create(ctx, "alice", "secret", &github.NewPullRequest{Title: github.String("Fix"), Head: github.String("bot/fix"), Base: github.String("main")})
	require.NoError(t, err)
	assert.Equal(t, head, pr.GetHead().GetSHA())
	assert.Equal(t, 1, pr.GetCommits())
	diff, _, err := w.gh["bot"].PullRequests.GetRaw(ctx, "alice", "secret", pr.GetNumber(), github.RawOptions{Type: github.Diff})
	require.NoError(t, err)
	assert.Contains(t, diff, "+fixed")

	// And a commit made through the API is fetched by git.
	_, _, err = w.gh["bot"].Repositories.CreateFile(ctx, "alice", "secret", "api.txt", &github.RepositoryContentFileOptions{Message: github.String("api"), Content: []byte("api\n"), Branch: github.String("bot/fix")})
	require.NoError(t, err)
	out, err = gitCmd(t, work, "pull", "--quiet", "--ff-only", "origin", "bot/fix")
	require.NoError(t, err, out)
	assert.FileExists(t, filepath.Join(work, "api.txt"))

	// Push needs write: mallory can read the public repo but not push.
	pub := filepath.Join(tmp, "anon")
	out, err = gitCmd(t, pub, "push", "--quiet", authURL(w.base, "tok-mallory", "alice/app"), "HEAD:refs/heads/evil")
	require.Error(t, err)
	assert.Contains(t, out, "403", out)
	out, err = gitCmd(t, pub, "push", "--quiet", w.base+"alice/app.git", "HEAD:refs/heads/evil")
	require.Error(t, err, "anonymous push")
	assert.Empty(t, w.sim.Refs("alice/app", "refs/heads/evil"))

	// Every smart HTTP request is logged; a 401 carries WWW-Authenticate.
	var sawAuth bool
	for _, r := range w.sim.Requests() {
		if strings.HasSuffix(r.Path, "/info/refs") && r.Status == http.StatusUnauthorized {
			sawAuth = true
		}
	}
	assert.True(t, sawAuth)
	resp, err := http.Get(w.base + "alice/secret.git/info/refs?service=git-upload-pack")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, `Basic realm="GitHub"`, resp.Header.Get("WWW-Authenticate"))
}
