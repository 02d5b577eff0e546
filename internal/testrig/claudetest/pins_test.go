package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// lockfile is what the pins tests read of a package-lock.json.
type lockfile struct {
	Packages map[string]struct {
		Version      string            `json:"version"`
		Integrity    string            `json:"integrity"`
		Engines      map[string]string `json:"engines"`
		Dependencies map[string]string `json:"dependencies"`
	} `json:"packages"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}

var minNode = regexp.MustCompile(`^>=\s*(\d+)`)

// nodeRuns reports whether Node major version major satisfies an npm
// engines.node range of the forms the pinned CLIs use (>=N, >=N.x.y, or
// alternatives joined by ||, each ^N or >=N).
func nodeRuns(rng string, major int) bool {
	for _, alt := range strings.Split(rng, "||") {
		alt = strings.TrimSpace(alt)
		if m := minNode.FindStringSubmatch(alt); m != nil {
			if n, _ := strconv.Atoi(m[1]); major >= n {
				return true
			}
			continue
		}
		if v, ok := strings.CutPrefix(alt, "^"); ok {
			n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
			if n == major {
				return true
			}
		}
	}
	return false
}

func TestNodeRuns(t *testing.T) {
	for rng, want := range map[string]bool{">=22.0.0": true, ">=22": true, ">=25": false, "^18 || ^20 || >= 21": true, "^18 || ^20": false, ">=16": true} {
		assert.Equal(t, want, nodeRuns(rng, 24), rng)
	}
}

// semver compares two x.y.z versions: -1, 0 or 1.
func semver(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

// TestWorkflowInstallsCLIsThatRunThere: the agent job installs each engine
// CLI from its own lockfile (tools/workflow/<cli>), at an exact version
// whose every package runs on the Node.js the job sets up, and no older
// than the version the tests run (tools/<cli>, pinned to what this
// machine's Node runs). The version inputs default to empty: the lockfile
// decides.
func TestWorkflowInstallsCLIsThatRunThere(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := moduleRoot(wd)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "agent-run.yml"))
	require.NoError(t, err)
	var wf struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]struct{ Default string }
			} `yaml:"workflow_call"`
		} `yaml:"on"`
	}
	require.NoError(t, yaml.Unmarshal(b, &wf))
	node, err := strconv.Atoi(wf.On.WorkflowCall.Inputs["node-version"].Default)
	require.NoError(t, err, "agent-run.yml's node-version defaults to a major version")
	assert.GreaterOrEqual(t, node, 22, "the agent job runs on a Node.js GitHub's runners still have")
	tests := []struct{ dir, pkg, input string }{
		{"claude-code", "@anthropic-ai/claude-code", "claude-code-version"},
		{"codex", "@openai/codex", "codex-version"},
		{"gemini-cli", "@google/gemini-cli", "gemini-cli-version"},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			in, ok := wf.On.WorkflowCall.Inputs[tc.input]
			require.True(t, ok, "agent-run.yml has no input %s", tc.input)
			assert.Empty(t, in.Default, "the lockfile decides the version")

			var pj struct{ Dependencies map[string]string }
			readJSON(t, filepath.Join(root, "tools", "workflow", tc.dir, "package.json"), &pj)
			pinned := pj.Dependencies[tc.pkg]
			require.Regexp(t, `^\d+\.\d+\.\d+$`, pinned, "an exact version, not a range")
			var lock lockfile
			readJSON(t, filepath.Join(root, "tools", "workflow", tc.dir, "package-lock.json"), &lock)
			assert.Equal(t, pinned, lock.Packages["node_modules/"+tc.pkg].Version, "the lockfile holds package.json's version")
			for name, p := range lock.Packages {
				if name == "" {
					continue
				}
				assert.NotEmpty(t, p.Integrity, "%s: npm ci checks it against a sha512", name)
				if rng := p.Engines["node"]; rng != "" {
					assert.True(t, nodeRuns(rng, node), "%s needs Node %s; the agent job sets up %d", name, rng, node)
				}
			}

			var tested struct{ Dependencies map[string]string }
			readJSON(t, filepath.Join(root, "tools", tc.dir, "package.json"), &tested)
			assert.GreaterOrEqual(t, semver(pinned, tested.Dependencies[tc.pkg]), 0,
				"the workflow installs %s %s, older than the %s the tests run", tc.pkg, pinned, tested.Dependencies[tc.pkg])
		})
	}
}
