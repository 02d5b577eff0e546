package layout

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/mention-runner/mention-runner/"

// group is the first directory under internal/ (core, dispatcher, runner,
// testrig, devtools), or "cmd" for the binaries.
func group(path string) string {
	rel := strings.TrimPrefix(path, module)
	parts := strings.Split(rel, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return parts[1]
	}
	return parts[0]
}

// mayImport says which groups a group's non-test code may import. Product
// code never links a rig or a tool; core serves both stages and knows
// neither; the dispatcher and the runner meet only in core.
var mayImport = map[string][]string{
	"core":       {"core"},
	"dispatcher": {"core", "dispatcher"},
	"runner":     {"core", "runner"},
	"testrig":    {"core", "dispatcher", "runner", "testrig"},
	"devtools":   {"core", "devtools"},
	"cmd":        {"core", "dispatcher", "runner", "testrig", "devtools", "cmd"},
}

type pkg struct {
	ImportPath   string
	Imports      []string
	Doc          string
	Name         string
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
}

func listAll(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var all []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		all = append(all, p)
	}
	require.NotEmpty(t, all)
	return all
}

func TestLayersImportOnlyDownward(t *testing.T) {
	for _, p := range listAll(t) {
		g := group(p.ImportPath)
		allowed, ok := mayImport[g]
		require.True(t, ok, "%s is in no known group (internal/{core,dispatcher,runner,testrig,devtools} or cmd)", p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			require.Contains(t, allowed, group(imp), "%s (%s) imports %s (%s): a layer above its own", p.ImportPath, g, imp, group(imp))
		}
	}
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range listAll(t) {
		if p.Name == "main" {
			continue
		}
		doc := p.Doc
		if len(p.GoFiles) == 0 {
			// A package of tests alone keeps its doc comment in a test file.
			for _, f := range append(p.TestGoFiles, p.XTestGoFiles...) {
				raw, err := os.ReadFile(filepath.Join(p.Dir, f))
				require.NoError(t, err)
				if strings.Contains(string(raw), "\n// Package ") || strings.HasPrefix(string(raw), "// Package ") {
					doc = f
				}
			}
		}
		require.NotEmpty(t, doc, "%s has no package doc comment", p.ImportPath)
	}
}
