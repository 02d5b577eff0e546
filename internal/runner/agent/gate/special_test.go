package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// TestPullRequestSymlinkRefused: the target holds a symlink, checked out
// (core.symlinks=false, as the fetch job leaves it) as a plain file whose
// text is the link's target. An agent that edits that text, adds a link or
// removes one asks for a pull request committing a mode 120000 change: the
// gate refuses it, names the path, and queues no bundle.
func TestPullRequestSymlinkRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(t *testing.T, work string)
		path string
	}{
		{"link text edited to /proc/self/environ", func(t *testing.T, w string) {
			require.NoError(t, os.WriteFile(filepath.Join(w, "docs-link"), []byte("/proc/self/environ"), 0o644))
		}, "docs-link"},
		{"link text edited to a key up the tree", func(t *testing.T, w string) {
			require.NoError(t, os.WriteFile(filepath.Join(w, "docs-link"), []byte("../../../../../home/runner/.ssh/id_rsa"), 0o644))
		}, "docs-link"},
		{"new link", func(t *testing.T, w string) {
			require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(w, "passwd")))
		}, "passwd"},
		{"link removed", func(t *testing.T, w string) {
			require.NoError(t, os.Remove(filepath.Join(w, "docs-link")))
		}, "docs-link"},
		{"link made a regular file", func(t *testing.T, w string) {
			run(t, w, "rm", "--quiet", "--cached", "docs-link")
			require.NoError(t, os.WriteFile(filepath.Join(w, "docs-link"), []byte("plain\n"), 0o644))
		}, "docs-link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // its own run dir and clone
			cfg := baseConfig(t)
			work := gitRepo(t)
			origin := run(t, work, "remote", "get-url", "origin")
			require.NoError(t, os.Symlink("README.md", filepath.Join(origin, "docs-link")))
			run(t, origin, "add", "-A")
			run(t, origin, "commit", "--quiet", "-m", "a link")
			run(t, work, "config", "core.symlinks", "false")
			run(t, work, "pull", "--quiet", "--ff-only")
			st, err := os.Lstat(filepath.Join(work, "docs-link"))
			require.NoError(t, err)
			require.True(t, st.Mode().IsRegular(), "the link is checked out as a plain file")
			cfg.WorkDir, cfg.DefaultBase = work, "main"
			// a regular edit beside it: the refusal is for the link alone
			require.NoError(t, os.WriteFile(filepath.Join(work, "README.md"), []byte("fixed\n"), 0o644))
			c.edit(t, work)
			cs := connect(t, cfg)
			text, isErr := call(t, cs, contract.ToolCreatePullRequest, map[string]any{"repo": hereRepo, "title": "Fix", "body": "b"})
			assert.True(t, isErr, text)
			assert.Contains(t, text, "symbolic links or submodules ("+c.path+")")
			recs := readLog(t, cfg)
			require.Len(t, recs, 1)
			assert.Equal(t, DecisionDenied, recs[0].Decision)
			assert.Equal(t, RuleSpecialEntry, recs[0].Rule)
			assert.Empty(t, readOutputs(t, cfg))
			assert.NoFileExists(t, filepath.Join(cfg.RunDir, "pr-0.bundle"))
		})
	}
}
