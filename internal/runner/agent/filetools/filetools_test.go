package filetools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

var allTools = append(append([]string{}, contract.ReadFileTools...), contract.WriteFileTools...)

// checkout makes a checkout with a few files, a git dir inside it (the
// legacy workspace) and a symlink pointing out; it returns it and a
// directory beside it holding a secret.
func checkout(t *testing.T) (string, string) {
	t.Helper()
	base := t.TempDir()
	dir, out := filepath.Join(base, "checkout"), filepath.Join(base, "outside")
	for p, c := range map[string]string{
		"README.md": "# hello\nsecond line\n", "src/main.go": "package main\n// TODO fix\n",
		".git/config": "[core]\n", "docs/a.md": "TODO too\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "secret.txt"), []byte("root:x:0:0"), 0o644))
	require.NoError(t, os.Symlink(out, filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(filepath.Join(out, "secret.txt"), filepath.Join(dir, "secret-link.txt")))
	return dir, out
}

func open(t *testing.T, dir string, tools []string) *Files {
	t.Helper()
	f, err := Open(dir, tools)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestResolve(t *testing.T) {
	dir, _ := checkout(t)
	f := open(t, dir, allTools)
	for _, tc := range []struct{ in, want string }{
		{"README.md", "README.md"}, {"./src/../README.md", "README.md"}, {filepath.Join(dir, "src/main.go"), "src/main.go"},
		{"", "."}, {dir, "."}, {"src/", "src"},
	} {
		got, err := f.Resolve(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"../outside/secret.txt", "/etc/passwd", "~/.bashrc", "~", "src/../../x", ".git/config",
		"src/.git/hooks/pre-commit", filepath.Join(dir, "..", "outside"), "a\x00b", filepath.Dir(dir)} {
		_, err := f.Resolve(bad)
		assert.ErrorIs(t, err, ErrOutside, bad)
	}
}

func TestReadTools(t *testing.T) {
	dir, _ := checkout(t)
	f := open(t, dir, contract.ReadFileTools)

	s, err := f.ReadFile("README.md", 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "     1\t# hello\n     2\tsecond line\n", s)
	s, err = f.ReadFile("README.md", 2, 1)
	require.NoError(t, err)
	assert.Equal(t, "     2\tsecond line\n", s)

	s, err = f.ListFiles("", "")
	require.NoError(t, err)
	assert.Equal(t, "README.md\ndocs/a.md\nlink\nsecret-link.txt\nsrc/main.go\n", s, "no .git; symlinks listed, not followed")
	s, err = f.ListFiles(".", "*.md")
	require.NoError(t, err)
	assert.Equal(t, "README.md\ndocs/a.md\n", s)

	s, err = f.SearchFiles("TODO", "", "")
	require.NoError(t, err)
	assert.Equal(t, "docs/a.md:1: TODO too\nsrc/main.go:2: // TODO fix\n", s)
	_, err = f.SearchFiles("(", "", "")
	assert.ErrorContains(t, err, "regular expression")

	for _, p := range []string{"/etc/passwd", "../outside/secret.txt", "secret-link.txt", "link/secret.txt", ".git/config"} {
		_, err := f.ReadFile(p, 0, 0)
		assert.ErrorIs(t, err, ErrOutside, p)
	}
	_, err = f.ListFiles("link", "")
	assert.ErrorIs(t, err, ErrOutside)
	_, err = f.ListFiles("/etc", "")
	assert.ErrorIs(t, err, ErrOutside)
}

func TestWriteTools(t *testing.T) {
	dir, out := checkout(t)
	f := open(t, dir, allTools)

	_, err := f.WriteFile("new/dir/fix.txt", "fixed\n")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "new/dir/fix.txt"))
	require.NoError(t, err)
	assert.Equal(t, "fixed\n", string(b))

	_, err = f.EditFile("README.md", "# hello", "# fixed", false)
	require.NoError(t, err)
	b, _ = os.ReadFile(filepath.Join(dir, "README.md"))
	assert.Equal(t, "# fixed\nsecond line\n", string(b))
	_, err = f.EditFile("README.md", "nope", "x", false)
	assert.ErrorContains(t, err, "not found")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "twice.txt"), []byte("a a"), 0o644))
	_, err = f.EditFile("twice.txt", "a", "b", false)
	assert.ErrorContains(t, err, "2 times")
	_, err = f.EditFile("twice.txt", "a", "b", true)
	require.NoError(t, err)

	for _, p := range []string{"../escape.txt", "/tmp/mr-filetools-escape", "~/.bashrc", "link/planted.txt", "secret-link.txt",
		".git/hooks/pre-commit", filepath.Join(out, "planted.txt"), "."} {
		_, err := f.WriteFile(p, "x")
		assert.Error(t, err, p)
	}
	_, err = f.EditFile("secret-link.txt", "root", "x", false)
	assert.Error(t, err)
	b, _ = os.ReadFile(filepath.Join(out, "secret.txt"))
	assert.Equal(t, "root:x:0:0", string(b), "nothing outside changed")
	assert.NoFileExists(t, filepath.Join(out, "planted.txt"))
	assert.NoFileExists(t, filepath.Join(filepath.Dir(dir), "escape.txt"))
	assert.NoFileExists(t, "/tmp/mr-filetools-escape")
	assert.NoFileExists(t, filepath.Join(dir, ".git/hooks/pre-commit"))
}

// TestServerOffersOnlyEnabledTools: over MCP, a read-only server has no
// write tools, and a refusal is a tool error the model reads.
func TestServerOffersOnlyEnabledTools(t *testing.T) {
	dir, _ := checkout(t)
	f := open(t, dir, contract.ReadFileTools)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.Server("test").Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, contract.ReadFileTools, names)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contract.ToolReadFile, Arguments: map[string]any{"path": "/etc/passwd"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "outside the checkout")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: contract.ToolReadFile, Arguments: map[string]any{"path": "README.md"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "# hello")
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: contract.ToolWriteFile, Arguments: map[string]any{"path": "x", "content": "x"}})
	assert.Error(t, err, "write_file is not served")
	assert.NoFileExists(t, filepath.Join(dir, "x"))
}

func TestOpenRefusesUnknownTool(t *testing.T) {
	_, err := Open(t.TempDir(), []string{"read_file", "bash"})
	assert.ErrorContains(t, err, `unknown file tool "bash"`)
}

func FuzzResolve(f *testing.F) {
	dir := f.TempDir()
	files, err := Open(dir, contract.ReadFileTools)
	require.NoError(f, err)
	for _, s := range []string{"README.md", "../x", "/etc/passwd", "a/../../b", "~", ".git", "a/./.git/b", dir + "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := files.Resolve(p)
		if err != nil {
			return
		}
		full := filepath.Join(dir, rel)
		r, err := filepath.Rel(dir, full)
		if err != nil || r == ".." || len(r) > 2 && r[:3] == "../" || filepath.IsAbs(rel) {
			t.Fatalf("%q resolved to %q, outside %s", p, rel, dir)
		}
	})
}
