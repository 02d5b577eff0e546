package readme

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoPath matches a repository path as the docs write it: a top-level
// directory of this repository, then a path.
var repoPath = regexp.MustCompile(`(?:^|[^\w./-])((?:internal|cmd|scripts|examples|tools|docs|demo|\.github)/[\w./-]*[\w/])`)

// mdLink matches a markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)]*)?\)`)

// codeSpan matches inline code, where a link is only text.
var codeSpan = regexp.MustCompile("`[^`\n]*`")

// TestDocsPathsExist: every repository path README.md or a docs/ page
// names, and every relative link in them, exists, so a recipe never sends
// a reader to a file that moved. A path may end in a Go identifier
// (internal/core/policy.Decide): the part before the dot must exist. What
// make installs (node_modules, git-ignored) is not checked.
func TestDocsPathsExist(t *testing.T) {
	const root = "../../.."
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		text := string(raw)
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			p := strings.TrimSuffix(m[1], "/")
			if exists(p) || strings.Contains(p, "/node_modules") {
				continue
			}
			if i := strings.LastIndex(p, "."); i > strings.LastIndex(p, "/") && exists(p[:i]) {
				continue
			}
			assert.Fail(t, "no such path", "%s names %s", file, p)
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, ":") {
				continue // a URL
			}
			assert.True(t, exists(path.Join(path.Dir(file), target)), "%s links to %s, which does not exist", file, target)
		}
	}
}
