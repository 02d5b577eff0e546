package readme

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/prebuilt"
)

const runMarker = "<!-- readme-test: run -->"

// block is one ```sh code block of README.md or a docs/ page.
type block struct {
	file string // relative to the repository root
	line int    // 1-based line of the opening fence
	run  bool   // marked to be run as written
	body string // without the fences
}

// docFiles is README.md and every page under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages, "no docs/*.md")
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(filepath.Join("docs", filepath.Base(p))))
	}
	return files
}

func shellBlocks(t *testing.T) []block {
	t.Helper()
	var out []block
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(filepath.Join("../../..", file))
		require.NoError(t, err)
		lines := strings.Split(string(raw), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```sh" {
				continue
			}
			b := block{file: file, line: i + 1, run: i > 0 && strings.TrimSpace(lines[i-1]) == runMarker}
			var body []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				body = append(body, lines[i])
			}
			b.body = strings.Join(body, "\n") + "\n"
			out = append(out, b)
		}
	}
	return out
}

// TestREADMEExamplesRun runs every block of README.md and docs/*.md marked
// readme-test: run with bash (errexit, pipefail) in an empty directory whose bin/ holds freshly built
// dispatcher and runner; each "# → TEXT" line must appear in the output.
func TestREADMEExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	var runs []block
	for _, b := range shellBlocks(t) {
		if b.run {
			runs = append(runs, b)
		}
	}
	require.NotEmpty(t, runs, "README and docs/ have no %s block", runMarker)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	installBinaries(ctx, t, filepath.Join(dir, "bin"))

	for _, b := range runs {
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.body)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		require.NoError(t, err, "%s line %d:\n%s\nstdout:\n%s\nstderr:\n%s", b.file, b.line, b.body, stdout.String(), stderr.String())
		for _, l := range strings.Split(b.body, "\n") {
			if want, ok := strings.CutPrefix(strings.TrimSpace(l), "# → "); ok {
				assert.Contains(t, stdout.String(), want, "%s line %d", b.file, b.line)
			}
		}
	}
}

// TestREADMECommandsExist: every shell block that is not run here holds
// only make commands, each naming a Makefile target (make test itself runs
// them, or they are the documented long runs: demo, bench, fuzz).
func TestREADMECommandsExist(t *testing.T) {
	mk, err := os.ReadFile("../../../Makefile")
	require.NoError(t, err)
	tools, err := os.ReadFile("../../../tools.mk")
	require.NoError(t, err)
	makefile := string(mk) + "\n" + string(tools)
	makeCmd := regexp.MustCompile(`^make ([a-z][a-z0-9-]*)( [A-Z_]+=\S+)*$`)
	for _, b := range shellBlocks(t) {
		if b.run {
			continue
		}
		for _, l := range strings.Split(b.body, "\n") {
			cmdText, _, _ := strings.Cut(l, "#")
			cmdText = strings.TrimSpace(cmdText)
			if cmdText == "" {
				continue
			}
			m := makeCmd.FindStringSubmatch(cmdText)
			if !assert.NotNil(t, m, "%s block at line %d: %q is neither a make target nor in a %s block", b.file, b.line, cmdText, runMarker) {
				continue
			}
			assert.Regexp(t, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(m[1])+`:`), makefile, "%s line %d: no Makefile target %s", b.file, b.line, m[1])
		}
	}
}

// installBinaries puts dispatcher and runner into bin, as `make build`
// does: links to the ones make test built (testkit/prebuilt), else built.
func installBinaries(ctx context.Context, t *testing.T, bin string) {
	t.Helper()
	cmds := []string{"dispatcher", "runner"}
	built, ok, err := prebuilt.Commands(cmds...)
	require.NoError(t, err)
	if ok {
		require.NoError(t, os.MkdirAll(bin, 0o755))
		for i, c := range cmds {
			require.NoError(t, os.Symlink(built[i], filepath.Join(bin, c)))
		}
		return
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./cmd/dispatcher", "./cmd/runner")
	build.Dir = "../../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
}
