package githubsim

import (
	"context"
	"io"
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
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		// no auto maintenance after a commit: one more process, on a
		// clone that is thrown away
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_KEY_1=gc.auto", "GIT_CONFIG_VALUE_1=0")
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

// TestSmartHTTPV2AdvertCached: the v2 upload-pack advertisement git gave
// once is served again byte for byte (every repository, every caller),
// still behind the same access checks; v0 advertisements (they list refs)
// still come from git each time.
func TestSmartHTTPV2AdvertCached(t *testing.T) {
	w := newWorld(t)
	get := func(repo, token, proto string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, w.base+repo+".git/info/refs?service=git-upload-pack", nil)
		require.NoError(t, err)
		if token != "" {
			req.SetBasicAuth("x-access-token", token)
		}
		if proto != "" {
			req.Header.Set("Git-Protocol", proto)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, string(b)
	}
	code, hdr, first := get("alice/app", "", "version=2")
	require.Equal(t, http.StatusOK, code, first)
	assert.Equal(t, "application/x-git-upload-pack-advertisement", hdr.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(first, "000eversion 2\n"), first)
	assert.NotContains(t, first, "refs/heads/")
	for _, c := range []struct{ repo, token string }{{"alice/app", ""}, {"alice/app", "tok-bot"}, {"alice/secret", "tok-bot"}} {
		code, hdr2, again := get(c.repo, c.token, "version=2")
		assert.Equal(t, http.StatusOK, code, c)
		assert.Equal(t, first, again, c)
		assert.Equal(t, hdr.Get("Content-Type"), hdr2.Get("Content-Type"), c)
		assert.Equal(t, hdr.Get("Cache-Control"), hdr2.Get("Cache-Control"), c)
	}
	// Access checks come before the cache.
	code, _, _ = get("alice/secret", "", "version=2")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = get("alice/secret", "tok-mallory", "version=2")
	assert.Equal(t, http.StatusNotFound, code)
	// v0 lists refs: still git's answer for this repository.
	code, _, v0 := get("alice/app", "", "")
	require.Equal(t, http.StatusOK, code, v0)
	assert.Contains(t, v0, "refs/heads/main")
	assert.NotEqual(t, first, v0)
}

// TestPushedObjectsLoadOnFirstRead: the first read that misses memory
// after a push takes everything the push brought (the commit, its trees
// down to the blobs) into memory at once, as git has them; what the
// repository had before is not read again.
func TestPushedObjectsLoadOnFirstRead(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	tmp := t.TempDir()
	out, err := gitCmd(t, tmp, "clone", "--quiet", authURL(w.base, "tok-bot", "alice/app"), "work")
	require.NoError(t, err, out)
	work := filepath.Join(tmp, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "a", "b", "deep.txt"), []byte("deep\n"), 0o644))
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "deep"}, {"push", "-q", "origin", "HEAD:refs/heads/deep"}} {
		out, err := gitCmd(t, work, args...)
		require.NoError(t, err, out)
	}
	names, err := gitCmd(t, work, "rev-parse", "HEAD", "HEAD:a", "HEAD:a/b", "HEAD:a/b/deep.txt", "HEAD~1")
	require.NoError(t, err, names)
	shas := strings.Fields(names)
	require.Len(t, shas, 5)

	g := w.sim.repos["alice/app"].git
	for _, sha := range shas[:4] {
		assert.False(t, g.inMemory(sha), "not read yet: %s", sha)
	}
	o, ok := g.get(ctx, shas[0])
	require.True(t, ok)
	assert.Equal(t, "commit", o.typ)
	for i, typ := range []string{"commit", "tree", "tree", "blob"} {
		g.mu.Lock()
		o, ok := g.objs[shas[i]]
		g.mu.Unlock()
		require.True(t, ok, "%s %s in memory after the first read", typ, shas[i])
		assert.Equal(t, typ, o.typ)
		raw, err := gitCmd(t, work, "cat-file", typ, shas[i])
		require.NoError(t, err)
		assert.Equal(t, raw, string(o.data), "as git has it")
	}
	assert.True(t, g.inMemory(shas[4]), "the parent was there before the push")
	g.mu.Lock()
	assert.Empty(t, g.pushed)
	g.mu.Unlock()
	assert.False(t, g.loadPushed(ctx), "nothing left to load")
}
