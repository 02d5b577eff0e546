// Package filetools is `runner mcp-files`: an MCP server whose tools read,
// search and (when the operator enables edits) change files in the target
// checkout and nowhere else. Engines whose own file tools cannot be kept
// inside the checkout or away from the repository's instruction files
// (Codex needs a shell to read; Gemini CLI loads GEMINI.md from every
// directory its tools touch) use these instead. Confinement is enforced
// here, in one place: every path is resolved against the checkout through
// an os.Root, so `..`, absolute paths elsewhere and symlinks pointing out
// are refused, and the git directory is never touched.
package filetools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Limits on what one call returns, so a huge file or tree cannot flood the
// model's context.
const (
	MaxReadBytes   = 256 << 10
	MaxListEntries = 2000
	MaxMatches     = 200
	MaxWriteBytes  = 4 << 20
)

// ErrOutside is a path that names something outside the checkout (or its
// git directory).
var ErrOutside = errors.New("outside the checkout")

// Files gives the tools access to one checkout.
type Files struct {
	dir   string // the checkout, absolute, symlinks resolved
	root  *os.Root
	tools []string
}

// Open opens the checkout dir for the given tools (names from
// contract.ReadFileTools and contract.WriteFileTools).
func Open(dir string, tools []string) (*Files, error) {
	for _, t := range tools {
		if !slices.Contains(contract.ReadFileTools, t) && !slices.Contains(contract.WriteFileTools, t) {
			return nil, fmt.Errorf("unknown file tool %q: want one of %s", t,
				strings.Join(append(append([]string{}, contract.ReadFileTools...), contract.WriteFileTools...), ", "))
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("checkout %q: %w", dir, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("checkout %q: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("checkout %q: %w", dir, err)
	}
	return &Files{dir: abs, root: root, tools: tools}, nil
}

// Close releases the checkout.
func (f *Files) Close() error { return f.root.Close() }

// Dir is the checkout's absolute path.
func (f *Files) Dir() string { return f.dir }

// Tools are the enabled tool names.
func (f *Files) Tools() []string { return f.tools }

// Resolve turns the path an agent gave (relative to the checkout, or
// absolute inside it) into a clean path relative to the checkout ("." for
// the checkout itself). Anything else is ErrOutside: a path above the
// checkout, elsewhere on the machine, through the home directory ("~"), or
// into a .git directory. Symlinks are refused later by os.Root when they
// lead out.
func (f *Files) Resolve(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%q: %w (the path contains a NUL byte)", p, ErrOutside)
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%q: %w: paths are relative to the checkout %s", p, ErrOutside, f.dir)
	}
	rel := p
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(f.dir, filepath.Clean(p))
		if err != nil {
			return "", fmt.Errorf("%q: %w %s", p, ErrOutside, f.dir)
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q: %w %s: only files in the checkout can be used", p, ErrOutside, f.dir)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" {
			return "", fmt.Errorf("%q: %w: the git directory is not part of the files you may use", p, ErrOutside)
		}
	}
	return rel, nil
}

// outside wraps an os.Root error that says the path escaped.
func outside(p string, err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%q: %w (through a symbolic link)", p, ErrOutside)
	}
	return err
}
