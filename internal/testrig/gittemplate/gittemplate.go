// Package gittemplate builds a test fixture directory (typically a git
// repository or two) once per test binary and gives each test its own
// copy. Under -race every git process a test forks costs tens of
// milliseconds of CPU; copying the few dozen files of a fresh repository
// in-process costs a fraction of that, and each test still owns its copy.
package gittemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Template is a fixture built on first use. The zero value is not usable:
// make one with New, and Remove it from TestMain after m.Run.
type Template struct {
	build func(t testing.TB, dir string)

	once  sync.Once
	dir   string
	built bool
}

// New returns a template that build fills on first use. build runs once,
// under the first test that asks for a copy; it reports failures on that
// test, and every later Copy then fails too instead of handing out a
// half-built fixture.
func New(build func(t testing.TB, dir string)) *Template {
	return &Template{build: build}
}

// Copy copies the template into a fresh t.TempDir and returns the copy's
// path. A clone in the template records its origin's absolute path in its
// .git/config: name each such file (relative to the template) in
// repointed and the copy's file names the copy's own origin instead, so
// no test reaches into the shared template. A named file that does not
// mention the template's path fails the test.
func (tp *Template) Copy(t testing.TB, repointed ...string) string {
	t.Helper()
	dst, src := tp.copy(t)
	for _, name := range repointed {
		p := filepath.Join(dst, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("gittemplate: %v", err)
		}
		if !strings.Contains(string(b), src+string(filepath.Separator)) {
			t.Fatalf("gittemplate: %s does not mention the template's path %s", name, src)
		}
		b = []byte(strings.ReplaceAll(string(b), src+string(filepath.Separator), dst+string(filepath.Separator)))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatalf("gittemplate: %v", err)
		}
	}
	return dst
}

func (tp *Template) copy(t testing.TB) (dst, src string) {
	t.Helper()
	tp.once.Do(func() {
		dir, err := os.MkdirTemp("", "gittemplate-")
		if err != nil {
			t.Fatalf("gittemplate: %v", err)
		}
		tp.dir = dir
		tp.build(t, dir)
		tp.built = true
	})
	if !tp.built {
		t.Fatal("gittemplate: the template failed to build (see the first test that used it)")
	}
	dst = t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(tp.dir)); err != nil {
		t.Fatalf("gittemplate: copy %s: %v", tp.dir, err)
	}
	return dst, tp.dir
}

// Remove deletes the template's directory; call it from TestMain after
// m.Run, when no test can copy it any more.
func (tp *Template) Remove() error {
	if tp.dir == "" {
		return nil
	}
	if err := os.RemoveAll(tp.dir); err != nil {
		return fmt.Errorf("gittemplate: remove %s: %w", tp.dir, err)
	}
	return nil
}

// Run runs the tests, then removes the templates; TestMain exits with its
// result: os.Exit(gittemplate.Run(m, templates...)).
func Run(m *testing.M, templates ...*Template) int {
	code := m.Run()
	for _, tp := range templates {
		if err := tp.Remove(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

// Head is the commit HEAD names in the repository at dir (a work tree with
// a .git directory, or a git directory itself), read from the files git
// keeps it in: HEAD, then the branch's loose ref or its packed-refs line.
// It is what `git rev-parse HEAD` prints, without a git process (one per
// commit a fixture makes, under -race tens of milliseconds of CPU each).
func Head(t testing.TB, dir string) string {
	t.Helper()
	gitDir := filepath.Join(dir, ".git")
	if st, err := os.Stat(gitDir); err != nil || !st.IsDir() {
		gitDir = dir
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		t.Fatalf("gittemplate: %v", err)
	}
	head := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if !symbolic {
		return checkSHA(t, head, "HEAD")
	}
	if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		return checkSHA(t, strings.TrimSpace(string(b)), ref)
	}
	packed, _ := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	for _, line := range strings.Split(string(packed), "\n") {
		if sha, name, ok := strings.Cut(line, " "); ok && name == ref {
			return checkSHA(t, sha, ref)
		}
	}
	t.Fatalf("gittemplate: %s names %s, which %s does not hold", filepath.Join(gitDir, "HEAD"), ref, gitDir)
	return ""
}

func checkSHA(t testing.TB, sha, what string) string {
	t.Helper()
	if len(sha) != 40 && len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		t.Fatalf("gittemplate: %s is %q, not a commit id", what, sha)
	}
	return sha
}
