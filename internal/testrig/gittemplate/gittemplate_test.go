package gittemplate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCopyBuildsOnceAndCopiesAreIndependent(t *testing.T) {
	var builds atomic.Int32
	tp := New(func(t testing.TB, dir string) {
		builds.Add(1)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("template\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), []byte("#!/bin/sh\n"), 0o755))
	})
	const n = 8
	dsts := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dsts[i] = tp.Copy(t)
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), builds.Load())

	src := tp.dir
	for i, d := range dsts {
		assert.NotEqual(t, src, d)
		b, err := os.ReadFile(filepath.Join(d, "sub", "f"))
		require.NoError(t, err)
		assert.Equal(t, "template\n", string(b))
		fi, err := os.Stat(filepath.Join(d, "x"))
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&0o100, "executable bit kept")
		if i == 0 {
			require.NoError(t, os.WriteFile(filepath.Join(d, "sub", "f"), []byte("changed\n"), 0o644))
		}
	}
	b, err := os.ReadFile(filepath.Join(src, "sub", "f"))
	require.NoError(t, err)
	assert.Equal(t, "template\n", string(b), "a test's changes stay in its copy")

	require.NoError(t, tp.Remove())
	assert.NoDirExists(t, src)
}

func TestRemoveUnusedTemplate(t *testing.T) {
	assert.NoError(t, New(func(testing.TB, string) { t.Error("built without a Copy") }).Remove())
}

func TestCopyRepointsOrigin(t *testing.T) {
	tp := New(func(t testing.TB, dir string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "work", ".git"), 0o755))
		cfg := "[remote \"origin\"]\n\turl = " + filepath.Join(dir, "origin") + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "work", ".git", "config"), []byte(cfg), 0o644))
	})
	defer func() { assert.NoError(t, tp.Remove()) }()
	dst := tp.Copy(t, "work/.git/config")
	b, err := os.ReadFile(filepath.Join(dst, "work", ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, "[remote \"origin\"]\n\turl = "+filepath.Join(dst, "origin")+"\n", string(b))
	assert.NotContains(t, string(b), tp.dir)
}

// TestHeadAsGitSays: Head reads what git rev-parse HEAD prints, from a
// loose ref, packed-refs, a detached HEAD and a bare repository.
func TestHeadAsGitSays(t *testing.T) {
	dir := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com",
			"-c", "maintenance.auto=false", "-c", "gc.auto=0"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	git(dir, "init", "--quiet", "-b", "main")
	git(dir, "commit", "--quiet", "--allow-empty", "-m", "one")
	assert.Equal(t, git(dir, "rev-parse", "HEAD"), Head(t, dir), "loose ref")
	git(dir, "pack-refs", "--all")
	assert.NoFileExists(t, filepath.Join(dir, ".git", "refs", "heads", "main"))
	assert.Equal(t, git(dir, "rev-parse", "HEAD"), Head(t, dir), "packed ref")
	git(dir, "commit", "--quiet", "--allow-empty", "-m", "two")
	assert.Equal(t, git(dir, "rev-parse", "HEAD"), Head(t, dir), "loose again, packed one stale")
	git(dir, "checkout", "--quiet", "--detach", "HEAD~1")
	assert.Equal(t, git(dir, "rev-parse", "HEAD"), Head(t, dir), "detached")
	bare := filepath.Join(t.TempDir(), "b.git")
	git(dir, "clone", "--quiet", "--bare", dir, bare)
	assert.Equal(t, git(bare, "rev-parse", "HEAD"), Head(t, bare), "bare")
}
