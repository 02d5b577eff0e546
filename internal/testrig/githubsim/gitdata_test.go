package githubsim

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGitDataBlobsTreesCommitsRefs(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	bot := w.gh["bot"]

	blob, resp, err := bot.Git.CreateBlob(ctx, "acme", "control", &github.Blob{Content: github.String(base64.StdEncoding.EncodeToString([]byte("shard-bytes"))), Encoding: github.String("base64")})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	utf, _, err := bot.Git.CreateBlob(ctx, "acme", "control", &github.Blob{Content: github.String("shard-bytes"), Encoding: github.String("utf-8")})
	require.NoError(t, err)
	assert.Equal(t, blob.GetSHA(), utf.GetSHA(), "same content, same object")
	got, _, err := bot.Git.GetBlob(ctx, "acme", "control", blob.GetSHA())
	require.NoError(t, err)
	data, err := base64.StdEncoding.DecodeString(got.GetContent())
	require.NoError(t, err)
	assert.Equal(t, "shard-bytes", string(data))
	_, _, err = bot.Git.CreateBlob(ctx, "acme", "control", &github.Blob{Content: github.String("!!"), Encoding: github.String("base64")})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))
	_, _, err = bot.Git.GetBlob(ctx, "acme", "control", strings.Repeat("0", 40))
	assert.Equal(t, http.StatusNotFound, statusOf(err))

	tree, resp, err := bot.Git.CreateTree(ctx, "acme", "control", "", []*github.TreeEntry{
		{Path: github.String("shard"), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA},
		{Path: github.String("dir/nested.txt"), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String("nested\n")},
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Len(t, tree.Entries, 2)
	rec, _, err := bot.Git.GetTree(ctx, "acme", "control", tree.GetSHA(), true)
	require.NoError(t, err)
	var paths []string
	for _, e := range rec.Entries {
		paths = append(paths, e.GetPath())
	}
	assert.ElementsMatch(t, []string{"dir", "dir/nested.txt", "shard"}, paths)
	_, _, err = bot.Git.CreateTree(ctx, "acme", "control", "", []*github.TreeEntry{{Path: github.String("x"), Mode: github.String("100777"), Type: github.String("blob"), Content: github.String("x")}})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "bad mode")

	commit, resp, err := bot.Git.CreateCommit(ctx, "acme", "control", &github.Commit{Message: github.String("shard 0"), Tree: tree}, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "bot", commit.GetAuthor().GetName())
	assert.Equal(t, tree.GetSHA(), commit.GetTree().GetSHA())
	gc, _, err := bot.Git.GetCommit(ctx, "acme", "control", commit.GetSHA())
	require.NoError(t, err)
	assert.Equal(t, "shard 0", gc.GetMessage())
	assert.Equal(t, w.now.Now(), gc.GetAuthor().GetDate().UTC())
	_, _, err = bot.Git.CreateCommit(ctx, "acme", "control", &github.Commit{Message: github.String("x"), Tree: &github.Tree{SHA: blob.SHA}}, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "tree must be a tree")

	const job = "refs/mention-runner/jobs/j1"
	for i, name := range []string{job + "/shards/0", job + "/shards/1", job + "-other/shards/0"} {
		ref, resp, err := bot.Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String(name), Object: &github.GitObject{SHA: commit.SHA}})
		require.NoError(t, err, i)
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, name, ref.GetRef())
		assert.Equal(t, "commit", ref.GetObject().GetType())
	}
	_, _, err = bot.Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String(job + "/shards/0"), Object: &github.GitObject{SHA: commit.SHA}})
	var er *github.ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, http.StatusUnprocessableEntity, er.Response.StatusCode)
	assert.Equal(t, "Reference already exists", er.Message)
	for _, bad := range []string{"refs/x", "refs/heads/bad..name"} {
		_, _, err = bot.Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String(bad), Object: &github.GitObject{SHA: commit.SHA}})
		assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), bad)
	}
	_, _, err = bot.Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String("refs/heads/x"), Object: &github.GitObject{SHA: github.String(strings.Repeat("1", 40))}})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "missing object")

	matching, _, err := bot.Git.ListMatchingRefs(ctx, "acme", "control", &github.ReferenceListOptions{Ref: "mention-runner/jobs/j1/"})
	require.NoError(t, err)
	assert.Len(t, matching, 2)
	prefix, _, err := bot.Git.ListMatchingRefs(ctx, "acme", "control", &github.ReferenceListOptions{Ref: "mention-runner/jobs/j1"})
	require.NoError(t, err)
	assert.Len(t, prefix, 3, "string prefix, as GitHub")
	assert.Equal(t, []string{job + "/shards/0", job + "/shards/1"}, w.sim.Refs("acme/control", job+"/"))

	r, _, err := bot.Git.GetRef(ctx, "acme", "control", "mention-runner/jobs/j1/shards/1")
	require.NoError(t, err)
	assert.Equal(t, commit.GetSHA(), r.GetObject().GetSHA())
	_, _, err = bot.Git.GetRef(ctx, "acme", "control", "mention-runner/jobs/j1/shards")
	assert.Equal(t, http.StatusNotFound, statusOf(err), "exact match only")

	// Update: fast-forward only unless forced.
	main, _, err := bot.Git.GetRef(ctx, "acme", "control", "heads/main")
	require.NoError(t, err)
	_, _, err = bot.Git.UpdateRef(ctx, "acme", "control", &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: commit.SHA}}, false)
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "unrelated history is not a fast forward")
	child, _, err := bot.Git.CreateCommit(ctx, "acme", "control", &github.Commit{Message: github.String("next"), Tree: tree, Parents: []*github.Commit{{SHA: main.Object.SHA}}}, nil)
	require.NoError(t, err)
	upd, _, err := bot.Git.UpdateRef(ctx, "acme", "control", &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: child.SHA}}, false)
	require.NoError(t, err)
	assert.Equal(t, child.GetSHA(), upd.GetObject().GetSHA())
	_, _, err = bot.Git.UpdateRef(ctx, "acme", "control", &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: commit.SHA}}, true)
	require.NoError(t, err, "forced")

	resp, err = bot.Git.DeleteRef(ctx, "acme", "control", "mention-runner/jobs/j1/shards/0")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	_, err = bot.Git.DeleteRef(ctx, "acme", "control", "mention-runner/jobs/j1/shards/0")
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))
	_, _, err = w.gh["mallory"].Git.GetRef(ctx, "acme", "control", "heads/main")
	assert.Equal(t, http.StatusNotFound, statusOf(err), "private")
}

// Exactly one of many concurrent creators of the same ref wins.
func TestConcurrentRefCreation(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	main, _, err := w.gh["bot"].Git.GetRef(ctx, "acme", "control", "heads/main")
	require.NoError(t, err)
	const racers = 8
	statuses := make([]int, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, resp, err := w.client("tok-bot").Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String("refs/mention-runner/jobs/x/lock"), Object: &github.GitObject{SHA: main.Object.SHA}})
			if err == nil {
				statuses[i] = resp.StatusCode
			} else {
				statuses[i] = statusOf(err)
			}
		}()
	}
	wg.Wait()
	wins := 0
	for _, s := range statuses {
		if s == http.StatusCreated {
			wins++
		} else {
			assert.Equal(t, http.StatusUnprocessableEntity, s)
		}
	}
	assert.Equal(t, 1, wins, "%v", statuses)
}

func TestContentsAPI(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	bot := w.gh["bot"]
	_, _, _, err := bot.Repositories.GetContents(ctx, "acme", "control", "blocklist.json", nil)
	assert.Equal(t, http.StatusNotFound, statusOf(err))

	created, resp, err := bot.Repositories.CreateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("create"), Content: []byte("[]\n")})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	fc, dir, _, err := bot.Repositories.GetContents(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentGetOptions{Ref: "main"})
	require.NoError(t, err)
	assert.Nil(t, dir)
	body, err := fc.GetContent()
	require.NoError(t, err)
	assert.Equal(t, "[]\n", body)
	assert.Equal(t, created.Content.GetSHA(), fc.GetSHA(), "sha is the blob sha")

	_, _, err = bot.Repositories.CreateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("again"), Content: []byte("[]\n")})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "existing file without sha")
	upd, resp, err := bot.Repositories.UpdateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("add"), Content: []byte("[{}]\n"), SHA: created.Content.SHA})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{created.Commit.GetSHA()}, []string{upd.Commit.Parents[0].GetSHA()})
	_, _, err = bot.Repositories.UpdateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("stale"), Content: []byte("[]\n"), SHA: created.Content.SHA})
	assert.Equal(t, http.StatusConflict, statusOf(err), "stale sha")
	_, _, err = bot.Repositories.CreateFile(ctx, "acme", "control", "new.json", &github.RepositoryContentFileOptions{Message: github.String("x"), Content: []byte("1"), SHA: created.Content.SHA})
	assert.Equal(t, http.StatusConflict, statusOf(err), "sha for a file that does not exist")
	_, _, err = bot.Repositories.CreateFile(ctx, "acme", "control", "x.json", &github.RepositoryContentFileOptions{Message: github.String("x"), Content: []byte("1"), Branch: github.String("nope")})
	assert.Equal(t, http.StatusNotFound, statusOf(err), "missing branch")

	// The commit is real: git data sees it as the head of main.
	main, _, err := bot.Git.GetRef(ctx, "acme", "control", "heads/main")
	require.NoError(t, err)
	assert.Equal(t, upd.Commit.GetSHA(), main.GetObject().GetSHA())
	_, list, _, err := bot.Repositories.GetContents(ctx, "acme", "control", "", nil)
	require.NoError(t, err)
	var names []string
	for _, e := range list {
		names = append(names, e.GetName())
	}
	assert.ElementsMatch(t, []string{"README.md", "blocklist.json"}, names)
	_, _, err = w.gh["mallory"].Repositories.CreateFile(ctx, "alice", "app", "x", &github.RepositoryContentFileOptions{Message: github.String("x"), Content: []byte("1")})
	assert.Equal(t, http.StatusForbidden, statusOf(err))
}
