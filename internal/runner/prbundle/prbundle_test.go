package prbundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

// repo is a scratch git repository for tests.
type repo struct {
	t   testing.TB
	dir string
}

// initialRepo is the repository every test starts from (README.md on
// main, one commit), made once per test binary: each newRepo copies it.
var initialRepo = gittemplate.New(func(t testing.TB, dir string) {
	r := &repo{t: t, dir: dir}
	r.git("init", "--quiet", "-b", "main")
	r.write("README.md", "hello\n")
	r.git("add", "-A")
	r.git("commit", "--quiet", "-m", "initial")
})

func TestMain(m *testing.M) {
	os.Exit(gittemplate.Run(m, initialRepo, forkTemplate, driverTemplate))
}

// newRepo is a copy of initialRepo of the test's own.
func newRepo(t testing.TB) *repo {
	t.Helper()
	return &repo{t: t, dir: initialRepo.Copy(t)}
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	// no auto maintenance: it is one more git process per commit, and
	// these repositories are thrown away
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false",
		"-c", "maintenance.auto=false", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = gitexec.Env("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(r.t, cmd.Run(), "git %v: %s", args, errb.String())
	return strings.TrimSpace(out.String())
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, path)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(r.t, os.WriteFile(full, []byte(content), 0o644))
}

func (r *repo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	for p, c := range files {
		r.write(p, c)
	}
	r.git("add", "-A")
	r.git("commit", "--quiet", "-m", msg)
	return gittemplate.Head(r.t, r.dir)
}

func TestCaptureRefusals(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		opts    Options
		wantErr func(error) bool
	}{
		{"no commits", nil, Options{}, func(err error) bool { return errors.Is(err, ErrNoCommits) }},
		{"workflow file", map[string]string{".github/workflows/ci.yml": "on: push\n"}, Options{},
			func(err error) bool {
				var w *WorkflowError
				return errors.As(err, &w) && w.Paths[0] == ".github/workflows/ci.yml"
			}},
		{"workflow dir in other case", map[string]string{".GitHub/Workflows/x.yml": "on: push\n"}, Options{},
			func(err error) bool { var w *WorkflowError; return errors.As(err, &w) }},
		{"over the size cap", map[string]string{"big.txt": strings.Repeat("incompressible? no, but big enough ", 2000)}, Options{MaxBytes: 200},
			func(err error) bool { var e *TooLargeError; return errors.As(err, &e) && e.Max == 200 && e.Size > 200 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRepo(t)
			base := gittemplate.Head(r.t, r.dir)
			if c.files != nil {
				r.commit("change", c.files)
			}
			out := filepath.Join(t.TempDir(), "pr-0.bundle")
			c.opts.Out = out
			_, err := Capture(context.Background(), r.dir, base, c.opts)
			require.Error(t, err)
			assert.True(t, c.wantErr(err), "unexpected error: %v", err)
			assert.NoFileExists(t, out)
			assert.NoFileExists(t, out+".tmp")
		})
	}
}

func TestCaptureWorkflowAllowed(t *testing.T) {
	r := newRepo(t)
	base := gittemplate.Head(r.t, r.dir)
	r.commit("ci", map[string]string{".github/workflows/ci.yml": "on: push\n"})
	b, err := Capture(context.Background(), r.dir, base, Options{Out: filepath.Join(t.TempDir(), "b"), AllowWorkflowChanges: true})
	require.NoError(t, err)
	assert.Equal(t, []string{".github/workflows/ci.yml"}, b.Paths)
}

func TestCaptureWorkflowRenamedAway(t *testing.T) {
	r := newRepo(t)
	r.commit("ci", map[string]string{".github/workflows/ci.yml": "on: push\n"})
	base := gittemplate.Head(r.t, r.dir)
	r.git("mv", ".github/workflows/ci.yml", "ci.yml")
	r.git("commit", "--quiet", "-m", "move")
	_, err := Capture(context.Background(), r.dir, base, Options{Out: filepath.Join(t.TempDir(), "b")})
	var w *WorkflowError
	require.ErrorAs(t, err, &w, "deleting a workflow is a workflow change too")
}

func TestCaptureBadBase(t *testing.T) {
	r := newRepo(t)
	for _, base := range []string{"", "--upload-pack=x", "origin/nope"} {
		_, err := Capture(context.Background(), r.dir, base, Options{Out: filepath.Join(t.TempDir(), "b")})
		assert.Error(t, err, base)
	}
	_, err := Capture(context.Background(), r.dir, "HEAD", Options{})
	assert.Error(t, err, "no output path")
}

func TestCaptureAndInspectRoundTrip(t *testing.T) {
	r := newRepo(t)
	// The publish side clones before the agent commits: it has the base only.
	clone := t.TempDir()
	r.git("clone", "--quiet", r.dir, clone)
	base := gittemplate.Head(r.t, r.dir)
	r.commit("add greeting", map[string]string{"greet.go": "package greet\n"})
	head := r.commit("fix readme", map[string]string{"README.md": "hello, world\n", "docs/a.md": "a\n"})

	out := filepath.Join(t.TempDir(), "pr-3.bundle")
	b, err := Capture(context.Background(), r.dir, base, Options{Out: out})
	require.NoError(t, err)
	assert.Equal(t, Bundle{Path: out, Base: base, BaseSHA: base, HeadSHA: head, Commits: 2,
		Paths: []string{"README.md", "docs/a.md", "greet.go"}, Size: b.Size}, b)
	assert.Positive(t, b.Size)

	info, err := InspectInto(context.Background(), clone, out)
	require.NoError(t, err)
	assert.Equal(t, head, info.HeadSHA)
	assert.Equal(t, []string{base}, info.Prerequisites)
	assert.Equal(t, b.Paths, info.Paths)
	assert.False(t, info.TouchesWorkflows)
	require.Len(t, info.Commits, 2)
	assert.Equal(t, "fix readme", info.Commits[0].Subject)
	assert.Equal(t, "Test <test@example.com>", info.Commits[0].Author)
	assert.Equal(t, b.Size, info.Size)

	// The bundle's commits are in the scratch repository now, under
	// refs/inspect/head only: the publish job pushes the head from there.
	cl := &repo{t: t, dir: clone}
	assert.Equal(t, head+" commit\trefs/inspect/head", cl.git("for-each-ref", "refs/inspect"))
	assert.Equal(t, "hello, world", cl.git("show", head+":README.md"))
}

// TestInspectTamperedBundles: bundles built to slip past publish are
// refused: a bundle with a history of its own (no prerequisite
// commits: its root commit's files were hidden by log.showRoot=false), and
// changes anywhere under .github/ in any case, renames included.
func TestInspectTamperedBundles(t *testing.T) {
	r := newRepo(t)
	clone := t.TempDir()
	r.git("clone", "--quiet", r.dir, clone)
	// The checkout's own config tries to hide root commits' files.
	(&repo{t: t, dir: clone}).git("config", "log.showRoot", "false")
	r.git("config", "log.showRoot", "false")

	t.Run("no shared history", func(t *testing.T) {
		o := &repo{t: t, dir: t.TempDir()}
		o.git("init", "--quiet", "-b", "main")
		o.commit("root", map[string]string{".github/actions/build/action.yml": "runs: {using: node20}\n"})
		out := filepath.Join(t.TempDir(), "orphan.bundle")
		o.git("bundle", "create", "--quiet", out, "HEAD")
		_, err := InspectInto(context.Background(), clone, out)
		assert.ErrorIs(t, err, ErrNoSharedHistory)
	})
	for name, change := range map[string]func(r *repo){
		"local action": func(r *repo) { r.commit("a", map[string]string{".github/actions/build/action.yml": "x\n"}) },
		"upper case":   func(r *repo) { r.commit("a", map[string]string{".GitHub/Workflows/ci.yml": "x\n"}) },
		"renamed in": func(r *repo) {
			r.commit("a", map[string]string{"x.yml": "on: push\n"})
			require.NoError(t, os.MkdirAll(filepath.Join(r.dir, ".github"), 0o755))
			r.git("mv", "x.yml", ".github/x.yml")
			r.git("commit", "--quiet", "-m", "mv")
		},
		"codeowners": func(r *repo) { r.commit("a", map[string]string{".github/CODEOWNERS": "* @evil\n"}) },
	} {
		t.Run(name, func(t *testing.T) {
			w := newRepo(t)
			cl := t.TempDir()
			w.git("clone", "--quiet", w.dir, cl)
			base := gittemplate.Head(w.t, w.dir)
			change(w)
			out := filepath.Join(t.TempDir(), "b")
			_, err := Capture(context.Background(), w.dir, base, Options{Out: out})
			var we *WorkflowError
			require.ErrorAs(t, err, &we, "the gate refuses")
			_, err = Capture(context.Background(), w.dir, base, Options{Out: out, AllowWorkflowChanges: true})
			require.NoError(t, err)
			info, err := InspectInto(context.Background(), cl, out)
			require.NoError(t, err)
			assert.True(t, info.TouchesWorkflows, "publish sees it: %v", info.Paths)
		})
	}
}

func TestInspectRefusals(t *testing.T) {
	r := newRepo(t)
	base := gittemplate.Head(r.t, r.dir)
	r.commit("c", map[string]string{"a": "1\n"})
	out := filepath.Join(t.TempDir(), "b")
	_, err := Capture(context.Background(), r.dir, base, Options{Out: out})
	require.NoError(t, err)

	t.Run("repo lacks the base", func(t *testing.T) {
		other := &repo{t: t, dir: t.TempDir()}
		other.git("init", "--quiet")
		other.commit("unrelated root", map[string]string{"x": "y\n"})
		_, err := InspectInto(context.Background(), other.dir, out)
		assert.ErrorContains(t, err, "lacks these prerequisite commits")
		assert.Empty(t, other.git("for-each-ref", "refs/inspect"), "nothing fetched")
	})
	t.Run("not a bundle", func(t *testing.T) {
		junk := filepath.Join(t.TempDir(), "junk")
		require.NoError(t, os.WriteFile(junk, []byte("PK\x03\x04 zip"), 0o644))
		_, err := InspectInto(context.Background(), r.dir, junk)
		assert.ErrorIs(t, err, ErrBadBundle)
	})
	t.Run("two refs", func(t *testing.T) {
		two := filepath.Join(t.TempDir(), "two")
		r.git("branch", "side")
		r.git("bundle", "create", "--quiet", two, "HEAD", "side", "^"+base)
		_, err := InspectInto(context.Background(), r.dir, two)
		assert.ErrorIs(t, err, ErrBadBundle)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := InspectInto(context.Background(), r.dir, filepath.Join(t.TempDir(), "nope"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestWorkflowPaths(t *testing.T) {
	cases := map[string]bool{
		".github/workflows/ci.yml": true, ".github/workflows": true, ".github": true,
		".GITHUB/WORKFLOWS/x": true, "./.github/workflows/a": true,
		".github/CODEOWNERS": true, ".github/actions/build/action.yml": true, ".GitHub/Actions/x.yml": true,
		"docs/.github/workflows/x": false, ".githubx/workflows/x": false, "github/x": false,
	}
	for p, want := range cases {
		assert.Equal(t, want, len(WorkflowPaths([]string{p})) == 1, p)
	}
}

func TestParseHeader(t *testing.T) {
	sha := strings.Repeat("a", 40)
	cases := []struct {
		in      string
		prereqs int
		refs    int
		bad     bool
	}{
		{"# v2 git bundle\n-" + sha + " subject\n" + sha + " HEAD\n\nPACK", 1, 1, false},
		{"# v3 git bundle\n@object-format=sha1\n" + sha + " HEAD\n\n", 0, 1, false},
		{"# v9 git bundle\n\n", 0, 0, true},
		{"# v2 git bundle\n" + sha + " HEAD\n", 0, 0, true},
		{"# v2 git bundle\nzz HEAD\n\n", 0, 0, true},
		{"# v2 git bundle\n-xyz\n\n", 0, 0, true},
		{"", 0, 0, true},
	}
	for _, c := range cases {
		p, r, err := parseHeader(strings.NewReader(c.in))
		if c.bad {
			assert.ErrorIs(t, err, ErrBadBundle, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Len(t, p, c.prereqs)
		assert.Len(t, r, c.refs)
	}
}

func FuzzParseHeader(f *testing.F) {
	sha := strings.Repeat("0", 40)
	f.Add("# v2 git bundle\n-" + sha + " s\n" + sha + " HEAD\n\n")
	f.Add("# v3 git bundle\n@filter=blob:none\n" + sha + " refs/heads/x\n\n")
	f.Add("# v2 git bundle\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, r, err := parseHeader(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, x := range p {
			assert.True(t, isHex(x))
		}
		for _, x := range r {
			assert.True(t, isHex(x[0]))
			assert.NotEmpty(t, x[1])
		}
	})
}

// FuzzSpecialMode: any status record either parses (special exactly when
// a mode field is 120000 or 160000) or is an error; never a panic.
func FuzzSpecialMode(f *testing.F) {
	z := strings.Repeat("0", 40)
	for _, s := range []string{":100644 120000 " + z + " " + z + " T", ":000000 160000 " + z + " " + z + " A",
		"\n:100644 100644 " + z + " " + z + " M", ":120000", "", ":a b c d e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		special, err := specialMode(rec)
		if err != nil {
			assert.False(t, special)
			return
		}
		fields := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(rec, "\n"), ":"))
		require.Len(t, fields, 5)
		want := false
		for _, m := range fields[:2] {
			want = want || m == "120000" || m == "160000"
		}
		assert.Equal(t, want, special)
	})
}
