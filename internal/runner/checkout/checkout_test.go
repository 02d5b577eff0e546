package checkout

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

// origin is a scratch "server": repos live under root/<owner>/<name>.git,
// fetched through file:// URLs.
type origin struct {
	t    testing.TB
	root string
	dir  string // the work repo that is pushed from
}

func newOrigin(t *testing.T) *origin {
	dst := originTemplate.Copy(t, "work/.git/config")
	return &origin{t: t, root: filepath.Join(dst, "root"), dir: filepath.Join(dst, "work")}
}

// originTemplate is the origin every test starts from, made once per test
// binary: a work repo (README.md, then a symlink out of the tree, a
// hostile .gitattributes and a hook) pushed to root/octo/hello.git.
var originTemplate = gittemplate.New(func(t testing.TB, dir string) {
	o := &origin{t: t, root: filepath.Join(dir, "root"), dir: filepath.Join(dir, "work")}
	require.NoError(t, os.MkdirAll(o.dir, 0o755))
	o.git(o.dir, "init", "--quiet", "-b", "main")
	o.commit(map[string]string{"README.md": "# hello\n"})
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(o.dir, "passwd-link")))
	require.NoError(t, os.MkdirAll(filepath.Join(o.dir, ".githooks"), 0o755))
	o.commit(map[string]string{".gitattributes": "* filter=evil\n", ".githooks/post-checkout": "#!/bin/sh\ntouch /tmp/never\n"})
	bare := filepath.Join(o.root, "octo", "hello.git")
	o.git(o.dir, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	// no git gc --auto after each push into it (one more process each): in
	// its own config, as a pusher's -c does not reach a local receive-pack
	o.git(bare, "config", "receive.autogc", "false")
	o.git(o.dir, "remote", "add", "origin", bare)
	o.git(o.dir, "push", "--quiet", "origin", "main")
})

func TestMain(m *testing.M) {
	os.Exit(gittemplate.Run(m, originTemplate))
}

func (o *origin) git(dir string, args ...string) string {
	o.t.Helper()
	c := gitexec.Isolated(dir, "", gitTimeout)
	out, err := c.Run(context.Background(), append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
	require.NoError(o.t, err)
	return strings.TrimSpace(string(out))
}

func (o *origin) commit(files map[string]string) string {
	for p, c := range files {
		require.NoError(o.t, os.WriteFile(filepath.Join(o.dir, p), []byte(c), 0o644))
	}
	o.git(o.dir, "add", "-A")
	o.git(o.dir, "commit", "--quiet", "-m", "c")
	return gittemplate.Head(o.t, o.dir)
}

// pushPR pushes a branch with one more commit as refs/heads/<ref> and
// refs/pull/<n>/head; it returns the head commit.
func (o *origin) pushPR(ref string, n int, file string) string {
	o.git(o.dir, "checkout", "--quiet", "-b", ref)
	sha := o.commit(map[string]string{file: "only on the PR\n"})
	o.git(o.dir, "push", "--quiet", "origin", ref, "HEAD:refs/pull/"+itoa(n)+"/head")
	o.git(o.dir, "checkout", "--quiet", "main")
	return sha
}

func itoa(n int) string { return strconv.Itoa(n) }

func (o *origin) fetch(t *testing.T, tg Target, max int64) (Manifest, string, error) {
	out := t.TempDir()
	m, err := Fetch(context.Background(), tg, FetchOptions{ServerURL: "file://" + o.root, OutDir: out, MaxBytes: max})
	return m, out, err
}

func TestFetchAndUnpackDefaultBranch(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	tg := Target{Repo: "octo/hello", DefaultBranch: "main"}
	m, art, err := o.fetch(t, tg, 0)
	require.NoError(t, err)
	assert.Equal(t, o.git(o.dir, "rev-parse", "main"), m.Commit)
	assert.Positive(t, m.PackBytes)

	ws := filepath.Join(t.TempDir(), "ws")
	gd := filepath.Join(t.TempDir(), "target.git")
	got, err := Unpack(context.Background(), art, ws, gd, tg)
	require.NoError(t, err)
	assert.Equal(t, m.Commit, got.Commit)
	b, err := os.ReadFile(filepath.Join(ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "# hello\n", string(b))
	assert.NoFileExists(t, filepath.Join(ws, ".git"), "the git directory lives outside the tree")
	assert.NoDirExists(t, filepath.Join(ws, ".git"))
	// a symlink arrives as a plain file holding the link text
	st, err := os.Lstat(filepath.Join(ws, "passwd-link"))
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular(), "mode %v", st.Mode())
	b, _ = os.ReadFile(filepath.Join(ws, "passwd-link"))
	assert.Equal(t, "/etc/passwd", string(b))
	r := Repo{WorkTree: ws, GitDir: gd}
	out, err := r.Git().Run(context.Background(), "rev-parse", "HEAD", "refs/remotes/origin/main")
	require.NoError(t, err)
	assert.Equal(t, m.Commit+"\n"+m.Commit+"\n", string(out))
	out, err = r.Git().Run(context.Background(), "status", "--porcelain")
	require.NoError(t, err)
	assert.Empty(t, string(out), "a fresh checkout is clean")
}

// TestFetchAsksForDefaultBranch: a context without default_branch (the
// repository object of a notification) still fetches the default branch.
func TestFetchAsksForDefaultBranch(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	m, art, err := o.fetch(t, Target{Repo: "octo/hello"}, 0)
	require.NoError(t, err)
	assert.Equal(t, "main", m.DefaultBranch)
	ws := filepath.Join(t.TempDir(), "ws")
	got, err := Unpack(context.Background(), art, ws, filepath.Join(t.TempDir(), "g"), Target{Repo: "octo/hello"})
	require.NoError(t, err)
	assert.Equal(t, "main", got.DefaultBranch)
	assert.Equal(t, "main", got.StackedBase())
	assert.FileExists(t, filepath.Join(ws, "README.md"))
}

func TestFetchPRHeadAtRecordedCommit(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	head := o.pushPR("feature", 7, "pr-only.txt")
	tg := Target{Repo: "octo/hello", DefaultBranch: "main", PullNumber: 7, HeadSHA: head, HeadRef: "feature", HeadRepo: "octo/hello"}
	m, art, err := o.fetch(t, tg, 0)
	require.NoError(t, err)
	assert.Equal(t, head, m.Commit)
	ws := filepath.Join(t.TempDir(), "ws")
	_, err = Unpack(context.Background(), art, ws, filepath.Join(t.TempDir(), "g"), tg)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(ws, "pr-only.txt"))
	assert.Equal(t, "feature", tg.StackedBase())

	fork := tg
	fork.HeadRepo = "mallory/hello"
	assert.Equal(t, "main", fork.StackedBase(), "a fork's branch is not a base in the target")

	// Unpack refuses a pack for another commit than the trusted context's.
	other := tg
	other.HeadSHA = strings.Repeat("a", 40)
	_, err = Unpack(context.Background(), art, filepath.Join(t.TempDir(), "ws2"), filepath.Join(t.TempDir(), "g2"), other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "recorded head")
}

// TestFetchForkPRCarriesDefaultTip: for a pull request from a fork the
// pack also holds the default branch's tip (which moved on after the fork
// branched off), checked out as origin/<default> beside the fork's head,
// even when the fork's branch has the default branch's name.
func TestFetchForkPRCarriesDefaultTip(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	o.git(o.dir, "checkout", "--quiet", "-b", "fork-main")
	head := o.commit(map[string]string{"fork-only.txt": "from the fork\n"})
	o.git(o.dir, "push", "--quiet", "origin", "HEAD:refs/pull/9/head")
	o.git(o.dir, "checkout", "--quiet", "main")
	tip := o.commit(map[string]string{"later.txt": "main moved on\n"})
	o.git(o.dir, "push", "--quiet", "origin", "main")

	tg := Target{Repo: "octo/hello", DefaultBranch: "main", PullNumber: 9, HeadSHA: head, HeadRef: "main", HeadRepo: "mallory/hello"}
	require.True(t, tg.FromFork())
	m, art, err := o.fetch(t, tg, 0)
	require.NoError(t, err)
	assert.Equal(t, head, m.Commit)
	assert.Equal(t, tip, m.BaseCommit)
	assert.ElementsMatch(t, []string{head, tip}, m.Shallow)

	ws, gd := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "g")
	_, err = Unpack(context.Background(), art, ws, gd, tg)
	require.NoError(t, err)
	r := Repo{WorkTree: ws, GitDir: gd}
	rev := func(name string) string {
		out, err := r.Git().Run(context.Background(), "rev-parse", "--verify", name)
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	assert.Equal(t, head, rev("HEAD"))
	assert.Equal(t, tip, rev("refs/remotes/origin/main"))
	assert.Equal(t, head, rev("refs/heads/"+tg.Branch()))
	sym, err := r.Git().Run(context.Background(), "symbolic-ref", "HEAD")
	require.NoError(t, err)
	assert.Equal(t, "refs/heads/"+tg.Branch()+"\n", string(sym), "HEAD names the branch")
	assert.FileExists(t, filepath.Join(ws, "fork-only.txt"))
	assert.NoFileExists(t, filepath.Join(ws, "later.txt"), "the agent works on the PR's code")
	_, err = r.Git().Run(context.Background(), "fsck", "--connectivity-only")
	require.NoError(t, err)

	// the same pack for a same-repo thread: the base commit is refused
	same := tg
	same.HeadRepo = "octo/hello"
	_, err = Unpack(context.Background(), art, filepath.Join(t.TempDir(), "ws2"), filepath.Join(t.TempDir(), "g2"), same)
	require.ErrorContains(t, err, "not a pull request from a fork")
}

func TestFetchRefusesMovedHead(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	o.pushPR("feature", 7, "pr-only.txt")
	tg := Target{Repo: "octo/hello", DefaultBranch: "main", PullNumber: 7, HeadSHA: strings.Repeat("b", 40), HeadRef: "feature", HeadRepo: "octo/hello"}
	_, _, err := o.fetch(t, tg, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mention the bot again")
}

func TestFetchSizeCap(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	big := make([]byte, 3<<20)
	_, _ = rand.New(rand.NewSource(1)).Read(big) // incompressible
	require.NoError(t, os.WriteFile(filepath.Join(o.dir, "big.bin"), big, 0o644))
	o.commit(nil)
	o.git(o.dir, "push", "--quiet", "origin", "main")
	_, out, err := o.fetch(t, Target{Repo: "octo/hello", DefaultBranch: "main"}, 1<<20)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "over the 1048576-byte cap")
	assert.NoFileExists(t, filepath.Join(out, PackFile))
}

// TestFetchTreeSizeCap: a pack of a few KiB whose tree names one 16 MiB
// blob of zeros under 200 paths would check out 3.2 GiB: the fetch
// refuses it against the checkout cap (default 1 GiB), before writing a
// pack or manifest for the agent job; the same tree under the cap passes.
func TestFetchTreeSizeCap(t *testing.T) {
	t.Parallel() // each test has its own origin repos
	o := newOrigin(t)
	zeros := filepath.Join(t.TempDir(), "zeros")
	require.NoError(t, os.WriteFile(zeros, nil, 0o644))
	require.NoError(t, os.Truncate(zeros, 16<<20))
	blob := o.git(o.dir, "hash-object", "-w", zeros)
	var info strings.Builder
	for i := range 200 {
		fmt.Fprintf(&info, "100644 %s\tbomb/%03d.bin\n", blob, i)
	}
	c := gitexec.Isolated(o.dir, "", gitTimeout)
	_, err := c.RunInput(context.Background(), []byte(info.String()), "update-index", "--index-info")
	require.NoError(t, err)
	o.git(o.dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "bomb")
	o.git(o.dir, "push", "--quiet", "origin", "main")

	m, out, err := o.fetch(t, Target{Repo: "octo/hello", DefaultBranch: "main"}, 0)
	var tl *TreeTooLargeError
	require.ErrorAs(t, err, &tl, "pack of %d bytes", m.PackBytes)
	assert.Equal(t, int64(200*16<<20+len("# hello\n")+len("/etc/passwd")+len("* filter=evil\n")+len("#!/bin/sh\ntouch /tmp/never\n")), tl.Size)
	assert.Contains(t, err.Error(), "over the 1073741824-byte cap on a checkout; raise max-tree-bytes")
	assert.NoFileExists(t, filepath.Join(out, PackFile))
	assert.NoFileExists(t, filepath.Join(out, ManifestFile))

	m, err = Fetch(context.Background(), Target{Repo: "octo/hello", DefaultBranch: "main"},
		FetchOptions{ServerURL: "file://" + o.root, OutDir: t.TempDir(), MaxTreeBytes: 4 << 30})
	require.NoError(t, err, "under a raised cap")
	assert.Less(t, m.PackBytes, int64(1<<20), "the pack is small; the checkout is not")
}

func TestUnpackRefusesNonEmptyWorkspace(t *testing.T) {
	o := newOrigin(t)
	tg := Target{Repo: "octo/hello", DefaultBranch: "main"}
	_, art, err := o.fetch(t, tg, 0)
	require.NoError(t, err)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "x"), nil, 0o644))
	_, err = Unpack(context.Background(), art, ws, filepath.Join(t.TempDir(), "g"), tg)
	require.ErrorContains(t, err, "not empty")
	_, err = Unpack(context.Background(), art, filepath.Join(t.TempDir(), "w"), filepath.Join(t.TempDir(), "g"), Target{Repo: "octo/other", DefaultBranch: "main"})
	require.ErrorContains(t, err, "octo/other")
}

func TestFromContext(t *testing.T) {
	sha := strings.Repeat("c", 40)
	tests := []struct {
		name, ctx string
		want      Target
		err       string
	}{
		{"issue", `{"repository":{"full_name":"o/r","default_branch":"main"},"issue":{"number":3}}`, Target{Repo: "o/r", DefaultBranch: "main"}, ""},
		{"pr", `{"repository":{"full_name":"o/r","default_branch":"main"},"issue":{"number":4,"pull_request":{}},"pull_request":{"number":4,"head":{"sha":"` + sha + `","ref":"feat/x","repo":{"full_name":"o/r"}}}}`,
			Target{Repo: "o/r", DefaultBranch: "main", PullNumber: 4, HeadSHA: sha, HeadRef: "feat/x", HeadRepo: "o/r"}, ""},
		{"pr with its base branch", `{"repository":{"full_name":"o/r","default_branch":"main"},"pull_request":{"number":4,"head":{"sha":"` + sha + `","ref":"x","repo":{"full_name":"o/r"}},"base":{"ref":"release/1"}}}`,
			Target{Repo: "o/r", DefaultBranch: "main", PullNumber: 4, HeadSHA: sha, HeadRef: "x", HeadRepo: "o/r", BaseRef: "release/1"}, ""},
		{"option base branch", `{"repository":{"full_name":"o/r","default_branch":"main"},"pull_request":{"number":4,"head":{"sha":"` + sha + `","ref":"x"},"base":{"ref":"-x"}}}`, Target{}, "pull_request.base.ref"},
		{"pr without head", `{"repository":{"full_name":"o/r","default_branch":"main"},"issue":{"number":4,"pull_request":{}}}`, Target{}, "pull_request.head"},
		{"bad sha", `{"repository":{"full_name":"o/r","default_branch":"main"},"pull_request":{"number":4,"head":{"sha":"HEAD~1","ref":"x"}}}`, Target{}, "not a commit id"},
		{"option branch", `{"repository":{"full_name":"o/r","default_branch":"--upload-pack=x"}}`, Target{}, "not a branch name"},
		{"no default branch (notification)", `{"repository":{"full_name":"o/r"}}`, Target{Repo: "o/r"}, ""},
		{"bad repo", `{"repository":{"full_name":"../x","default_branch":"main"}}`, Target{}, "owner/name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromContext([]byte(tt.ctx))
			if tt.err != "" {
				require.ErrorIs(t, err, ErrNoTarget)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzFromContext(f *testing.F) {
	f.Add([]byte(`{"repository":{"full_name":"o/r","default_branch":"main"},"pull_request":{"number":4,"head":{"sha":"` + strings.Repeat("c", 40) + `","ref":"x"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tg, err := FromContext(b)
		if err != nil {
			return
		}
		if b, base := tg.Branch(), tg.StackedBase(); (b != "" && !ValidBranch(b)) || (base != "" && !ValidBranch(base)) {
			t.Fatalf("accepted an invalid branch: %+v", tg)
		}
	})
}

// FuzzParseManifest: whatever the artifact holds, an accepted manifest has
// well-formed commit ids, is for the wanted repository and commit, and
// names only valid branches.
func FuzzParseManifest(f *testing.F) {
	sha := func(c string) string { return strings.Repeat(c, 40) }
	f.Add([]byte(`{"repo":"o/r","default_branch":"main","commit":"`+sha("a")+`","pack_bytes":1}`), false)
	f.Add([]byte(`{"repo":"o/r","default_branch":"main","pull_number":3,"head_sha":"`+sha("c")+`","head_ref":"main","head_repo":"f/r","commit":"`+sha("c")+`","pack_bytes":1,"base_commit":"`+sha("b")+`","shallow":["`+sha("c")+`","`+sha("b")+`"]}`), true)
	f.Add([]byte(`{"repo":"o/r","commit":"`+sha("a")+`"} {"x":1}`), false)
	f.Fuzz(func(t *testing.T, b []byte, pr bool) {
		want := Target{Repo: "o/r", DefaultBranch: "main"}
		if pr {
			want = Target{Repo: "o/r", DefaultBranch: "main", PullNumber: 3, HeadSHA: sha("c"), HeadRef: "main", HeadRepo: "f/r"}
		}
		m, err := ParseManifest(b, want)
		if err != nil {
			return
		}
		if !shaRe().MatchString(m.Commit) || (pr && m.Commit != want.HeadSHA) || m.Repo != want.Repo {
			t.Fatalf("accepted a manifest for other code: %+v", m)
		}
		if pr != shaRe().MatchString(m.BaseCommit) {
			t.Fatalf("base commit %q on a fork PR=%v", m.BaseCommit, pr)
		}
		for _, s := range m.Shallow {
			if !shaRe().MatchString(s) {
				t.Fatalf("accepted shallow %q", s)
			}
		}
		if !ValidBranch(m.Branch()) || !ValidBranch(m.DefaultBranch) {
			t.Fatalf("accepted an invalid branch: %+v", m)
		}
	})
}

// TestWorkTreeConfigAsGitWritesIt: Unpack writes the config of its fresh
// git directory itself; the bytes must be what git init --bare and the two
// git config commands it stands for write, with the git on PATH (so a git
// that writes init's config differently fails here, not in a checkout).
// Other shapes are left to git config.
func TestWorkTreeConfigAsGitWritesIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gitDir := filepath.Join(dir, "g.git")
	c := gitexec.Isolated(dir, "", gitTimeout, "GIT_DIR="+gitDir)
	_, err := c.Run(ctx, "init", "--quiet", "--bare", "--initial-branch=main", gitDir)
	require.NoError(t, err)
	fresh, err := os.ReadFile(filepath.Join(gitDir, "config"))
	require.NoError(t, err)
	for _, kv := range [][]string{{"core.bare", "false"}, {"core.symlinks", "false"}} {
		_, err := c.Run(ctx, "config", kv[0], kv[1])
		require.NoError(t, err)
	}
	want, err := os.ReadFile(filepath.Join(gitDir, "config"))
	require.NoError(t, err)
	got, ok := workTreeConfigOf(string(fresh))
	require.True(t, ok, "init's config %q", fresh)
	assert.Equal(t, string(want), got)

	for _, cfg := range []string{
		"",
		"[core]\n\tbare = false\n",
		"[core]\n\tbare = true\n\tsymlinks = true\n",
		"[core]\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n",
		"[core]\n\tbare = true\n\tbare = true\n",
		"[core]\n\tbare = true\n\tBare = false\n",
		"[core]\n\trepositoryformatversion = 0\n\tbare = true",
		"[core]\n bare = true\n",
	} {
		_, ok := workTreeConfigOf(cfg)
		assert.False(t, ok, "%q", cfg)
	}
	// the fallback runs git config: the same result
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\tbare = true\n\tsymlinks = true\n"), 0o644))
	require.NoError(t, setWorkTreeConfig(ctx, c, gitDir))
	out, err := c.Run(ctx, "config", "--get-regexp", "^core[.](bare|symlinks)$")
	require.NoError(t, err)
	assert.Equal(t, "core.bare false\ncore.symlinks false\n", string(out))
}

// FuzzWorkTreeConfigOf: whatever the input, workTreeConfigOf either falls
// back (ok false, no output) or was given a config git reads one way — a
// [core] header, then tab-indented "key = value" lines with git's key
// syntax, plain values (no quote or backslash: a trailing backslash
// continues the value onto the next line), exactly one "bare = true" and no
// symlinks key — and returns what the two git config commands write to
// such a file: the same lines, the bare one now false, then symlinks=false
// appended to the section.
func FuzzWorkTreeConfigOf(f *testing.F) {
	f.Add("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n") // git init --bare on Linux
	f.Add("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tlogallrefupdates = true\n")
	for _, s := range []string{
		"", "[core]\n\tbare = false\n", "[core]\n\tbare = true\n\tsymlinks = true\n",
		"[core]\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n", "[core]\n\tbare = true\n\tbare = true\n",
		"[core]\n\tbare = true\n\tBare = false\n", "[core]\n\trepositoryformatversion = 0\n\tbare = true", "[core]\n bare = true\n",
		"[core]\n\tx = a\\\n\tbare = true\n", "[core]\n\tx = a\tbare = true\n", "[core]\n\ta.b = 1\n\tbare = true\n",
	} {
		f.Add(s)
	}
	line := regexp.MustCompile("^\t([A-Za-z][A-Za-z0-9-]*) = ([^\\\\\"\r\x00]*)$")
	f.Fuzz(func(t *testing.T, cfg string) {
		out, ok := workTreeConfigOf(cfg)
		if !ok {
			assert.Empty(t, out)
			return
		}
		in := strings.Split(cfg, "\n")
		require.Equal(t, "[core]", in[0], "one [core] section")
		require.Equal(t, "", in[len(in)-1], "ends with a newline")
		in = in[1 : len(in)-1]
		bare := -1
		for i, l := range in {
			m := line.FindStringSubmatch(l)
			require.NotNil(t, m, "line %q is not a plain tab-indented key = value", l)
			require.False(t, strings.EqualFold(m[1], "symlinks"), "a symlinks key is git config's to change")
			if strings.EqualFold(m[1], "bare") {
				require.Equal(t, -1, bare, "one bare key")
				require.Equal(t, "\tbare = true", l)
				bare = i
			}
		}
		require.GreaterOrEqual(t, bare, 0, "a bare key")
		want := append([]string{"[core]"}, in...)
		want[1+bare] = "\tbare = false"
		want = append(want, "\tsymlinks = false", "")
		assert.Equal(t, strings.Join(want, "\n"), out)
	})
}
