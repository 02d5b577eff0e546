package checkout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/prdiff"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// TestFetchDiffRoundTrip: the fetch job reads the diff at the manifest's
// commit, writes and records it; the agent job reads it back through the
// manifest, and refuses a file the manifest does not describe.
func TestFetchDiffRoundTrip(t *testing.T) {
	sim, _ := simfixture.Start(t, githubsim.Options{})
	simfixture.Writer(t, sim, "alice/app", "alice", "tok", false)
	c := sim.Client("tok")
	ctx := context.Background()
	main, _, err := c.Git.GetRef(ctx, "alice", "app", "heads/main")
	require.NoError(t, err)
	_, _, err = c.Git.CreateRef(ctx, "alice", "app", &github.Reference{Ref: github.String("refs/heads/feature"), Object: main.Object})
	require.NoError(t, err)
	res, _, err := c.Repositories.CreateFile(ctx, "alice", "app", "new.txt", &github.RepositoryContentFileOptions{
		Message: github.String("add"), Content: []byte("hello\n"), Branch: github.String("feature")})
	require.NoError(t, err)
	head := res.Commit.GetSHA()

	tg := Target{Repo: "alice/app", DefaultBranch: "main", PullNumber: 1, HeadSHA: head, HeadRef: "feature", HeadRepo: "alice/app", BaseRef: "main"}
	for _, tc := range []struct {
		name        string
		commit      string
		unavailable bool
	}{
		{"the recorded head", head, false},
		{"a head the server cannot diff", strings.Repeat("d", 40), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := tg
			want.HeadSHA = tc.commit
			m := Manifest{Target: want, Commit: tc.commit, PackBytes: 1}
			d, err := threadctx.FetchDiff(ctx, c, want.Repo, want.BaseRef, m.Commit, 0)
			require.NoError(t, err)
			require.NoError(t, WriteDiff(dir, &m, d))
			b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
			require.NoError(t, err)
			got, err := ParseManifest(b, want)
			require.NoError(t, err)
			text, rec, ok, err := ReadDiff(dir, got, prdiff.DefaultMaxBytes)
			require.NoError(t, err)
			require.True(t, ok)
			if tc.unavailable {
				assert.Empty(t, text)
				assert.Contains(t, rec.Unavailable, "404")
				return
			}
			assert.Contains(t, text, "new.txt")
			assert.Contains(t, text, "+hello")
			assert.Equal(t, prdiff.Record{BytesTotal: int64(len(text))}, rec)

			// A diff over the agent's cap (max-diff-bytes lower than fetch's).
			_, _, _, err = ReadDiff(dir, got, len(text)-1)
			assert.ErrorContains(t, err, "the cap is")

			// A diff file other than the one the manifest describes.
			require.NoError(t, os.WriteFile(filepath.Join(dir, DiffFile), []byte(text+"+smuggled\n"), 0o644))
			_, _, _, err = ReadDiff(dir, got, prdiff.DefaultMaxBytes)
			assert.ErrorContains(t, err, "the manifest says")
		})
	}

	// No diff fetched (an issue): nothing to read.
	_, _, ok, err := ReadDiff(t.TempDir(), Manifest{Target: Target{Repo: "alice/app", DefaultBranch: "main"}, Commit: head}, prdiff.DefaultMaxBytes)
	assert.False(t, ok)
	assert.NoError(t, err)
}
