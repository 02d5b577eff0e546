package publish

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forgeBundle clones repo from the simulator, runs change in the clone
// (with git at hand) and bundles the commit into the run dir under name
// with git itself, as a forged agent job could: no Capture, so none of its
// refusals. It returns the bundle's head.
func (f *fixture) forgeBundle(repo, name string, change func(git func(args ...string) string, dir string)) string {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "work")
	gitCmd := func(args ...string) string {
		f.t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Dir(dir)
		if _, err := os.Stat(dir); err == nil {
			cmd.Dir = dir
		}
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false", "GIT_CONFIG_KEY_1=gc.auto", "GIT_CONFIG_VALUE_1=0",
			"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(f.t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	gitCmd("clone", "--quiet", f.base+repo+".git", dir)
	change(gitCmd, dir)
	gitCmd("commit", "--quiet", "-m", "agent change")
	gitCmd("bundle", "create", "--quiet", filepath.Join(f.runDir, name), "HEAD", "^origin/main")
	return gitCmd("rev-parse", "HEAD")
}

// TestPullRequestSpecialEntryRefused: a bundle that reaches publish
// changing a symlink (mode 120000) or a submodule (gitlink, mode 160000)
// — a forged outputs.jsonl entry with a bundle the gate never made — is
// refused by publish's own inspection of the bundle, with nothing pushed.
func TestPullRequestSpecialEntryRefused(t *testing.T) {
	t.Parallel()
	blob := func(git func(...string) string, dir, content string) string {
		p := filepath.Join(dir, ".blob")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		defer os.Remove(p)
		return git("hash-object", "-w", p)
	}
	cases := []struct {
		name   string
		change func(git func(...string) string, dir string)
		path   string
	}{
		{"symlink to /proc/self/environ", func(git func(...string) string, dir string) {
			require.NoError(t, os.Symlink("/proc/self/environ", filepath.Join(dir, "env")))
			git("add", "env")
		}, "env"},
		{"symlink up the tree by update-index", func(git func(...string) string, dir string) {
			git("update-index", "--add", "--cacheinfo", "120000,"+blob(git, dir, "../../../../../home/runner/.ssh/id_rsa")+",key")
		}, "key"},
		{"submodule", func(git func(...string) string, dir string) {
			git("update-index", "--add", "--cacheinfo", fmt.Sprintf("160000,%s,vendor/evil", strings.Repeat("ab", 20)))
		}, "vendor/evil"},
		{"regular file made a symlink", func(git func(...string) string, dir string) {
			files := git("ls-files")
			first, _, _ := strings.Cut(files, "\n")
			require.NotEmpty(t, first)
			git("update-index", "--cacheinfo", "120000,"+blob(git, dir, "/etc/passwd")+","+first)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own simulator and run dir
			f := newFixture(t, "")
			head := f.forgeBundle(testTarget, "pr-0.bundle", tc.change)
			f.add(prEntry(testTarget, "pr-0.bundle", head))
			o := f.options()
			o.Git.AllowPushToTarget = true
			res := f.run(o)
			require.Len(t, res.Refused, 1)
			assert.Equal(t, RuleSpecialEntry, res.Refused[0].Rule)
			assert.Contains(t, res.Refused[0].Reason, "symbolic links or submodules ("+tc.path)
			assert.Empty(t, f.sim.Refs(testTarget, "refs/heads/mention-runner/"))
			assert.Empty(t, f.botIssues(testTarget))
		})
	}
}
