package githubsim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGitStoreMatchesGit: the objects the simulator writes in memory are
// byte for byte what git writes (same hashes), and the repository it syncs
// to disk for smart HTTP passes git fsck with the refs memory holds.
func TestGitStoreMatchesGit(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g := w.sim.gitOf("alice/app")
	require.NotNil(t, g)
	git := func(stdin string, args ...string) string {
		t.Helper()
		out, err := w.sim.runGit(ctx, g.path, []byte(stdin), nil, args...)
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}

	blob := g.put("blob", []byte("hello\n"))
	sub := g.putTree([]treeItem{{mode: "100644", name: "x", sha: blob}})
	tree := g.putTree([]treeItem{
		{mode: "100644", name: "a.txt", sha: blob},
		{mode: "40000", name: "a", sha: sub}, // sorts as "a/": after "a.txt"
		{mode: "100755", name: "run", sha: blob},
	})
	sig := signature{Name: "Bot", Email: "bot@example.invalid", Date: time.Unix(1700000000, 0)}
	commit := g.putCommit(tree, nil, "msg\n", sig, sig)
	g.setRef("refs/heads/topic", commit)
	require.NoError(t, g.createRef("refs/mention-runner/jobs/j/lock", commit))
	assert.ErrorIs(t, g.createRef("refs/mention-runner/jobs/j/lock", commit), errRefExists)
	assert.ErrorIs(t, g.createRef("refs/mention-runner/jobs/j", commit), errRefConflict)

	g.diskMu.Lock()
	require.NoError(t, g.sync())
	g.diskMu.Unlock()

	assert.Equal(t, blob, git("hello\n", "hash-object", "--stdin"))
	assert.Equal(t, tree, git("100644 blob "+blob+"\ta.txt\n040000 tree "+sub+"\ta\n100755 blob "+blob+"\trun\n", "mktree"))
	env := []string{"GIT_AUTHOR_NAME=Bot", "GIT_AUTHOR_EMAIL=bot@example.invalid", "GIT_AUTHOR_DATE=1700000000 +0000",
		"GIT_COMMITTER_NAME=Bot", "GIT_COMMITTER_EMAIL=bot@example.invalid", "GIT_COMMITTER_DATE=1700000000 +0000"}
	out, err := w.sim.runGit(ctx, g.path, []byte("msg\n"), env, "commit-tree", tree)
	require.NoError(t, err)
	assert.Equal(t, commit, strings.TrimSpace(string(out)))
	git("", "fsck", "--strict", "--no-dangling")
	assert.Equal(t, commit, git("", "rev-parse", "refs/heads/topic"))
	assert.Equal(t, commit, git("", "rev-parse", "refs/mention-runner/jobs/j/lock"))

	// A deleted ref disappears from disk at the next sync.
	require.NoError(t, g.casRef("refs/mention-runner/jobs/j/lock", commit, ""))
	g.diskMu.Lock()
	require.NoError(t, g.sync())
	g.diskMu.Unlock()
	assert.NotContains(t, git("", "for-each-ref", "--format=%(refname)"), "refs/mention-runner/")
}

func TestValidRefName(t *testing.T) {
	for ref, want := range map[string]bool{
		"refs/heads/main": true, "refs/mention-runner/jobs/x/shards/0": true,
		"refs/heads": false, "heads/main": false, "refs/heads/a..b": false, "refs/heads/a b": false,
		"refs/heads/.hidden": false, "refs/heads/x.lock": false, "refs/heads/x/": false, "refs/heads/a@{1}": false,
		"refs/heads/a~1": false, "refs/heads/a:b": false, "refs//heads/x": false, "refs/heads/x.": false,
	} {
		assert.Equal(t, want, validRefName(ref), ref)
	}
}

// TestRequestLogHasEveryAnsweredRequest: a request whose answer the client
// holds is in the log, so a reset after it never sees it logged later.
func TestRequestLogHasEveryAnsweredRequest(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	for range 200 {
		_, _, err := w.gh["bot"].Repositories.Get(ctx, "alice", "app")
		require.NoError(t, err)
		w.sim.ResetRequests()
		require.Empty(t, w.sim.Requests(), "a request was logged after the reset")
	}
	_, _, err := w.gh["bot"].Repositories.Get(ctx, "alice", "app")
	require.NoError(t, err)
	require.Len(t, w.sim.Requests(), 1)
}
