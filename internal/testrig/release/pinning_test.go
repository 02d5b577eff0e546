package release

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mention-runner/mention-runner/internal/dispatcher/doctor"
)

// pinnedFiles are every workflow and action a user runs from this repository.
func pinnedFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../../action.yml"}
	for _, g := range []string{"../../../.github/workflows/*.yml", "../../../examples/*/.github/workflows/*.yml"} {
		m, err := filepath.Glob(g)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Greater(t, len(files), 3)
	return files
}

var (
	fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)
	// a literal ref in an expression: ${{ vars.X || 'v1' }}
	literalFallback = regexp.MustCompile(`\|\|\s*'([^']*)'`)
)

// usesPinned reports what is wrong with a uses: value, or "".
func usesPinned(uses string) string {
	if strings.HasPrefix(uses, "./") || strings.HasPrefix(uses, "docker://") && strings.Contains(uses, "@sha256:") {
		return ""
	}
	name, ref, ok := strings.Cut(uses, "@")
	if !ok {
		return "has no ref"
	}
	if strings.HasPrefix(name, "mention-runner/mention-runner/") {
		// Our own reusable workflow, in the example users copy: a release
		// tag or a commit, never a branch or a major tag.
		if !doctor.PinnedRef(ref) {
			return "is pinned to " + ref + ", which can move"
		}
		return ""
	}
	if !fullSHA.MatchString(ref) {
		return "is not pinned by commit sha (" + ref + " can move)"
	}
	return ""
}

// TestNoMovableRefs: no workflow or action runs code from a ref that can
// move unless the user asks for it — third-party actions by commit sha, our
// own code at the ref the user pinned, no input or expression defaulting
// to a tag or branch.
func TestNoMovableRefs(t *testing.T) {
	for _, f := range pinnedFiles(t) {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var root yaml.Node
		require.NoError(t, yaml.Unmarshal(raw, &root), f)
		name := strings.TrimPrefix(f, "../../../")
		walk(&root, "", func(path string, key, val *yaml.Node) {
			where := fmt.Sprintf("%s:%d %s", name, val.Line, path)
			switch key.Value {
			case "uses":
				if msg := usesPinned(val.Value); msg != "" {
					t.Errorf("%s: uses %s %s", where, val.Value, msg)
				}
			case "ref", "runner-ref", "version", "MENTION_RUNNER_REF":
				for _, m := range literalFallback.FindAllStringSubmatch(val.Value, -1) {
					t.Errorf("%s: %s falls back to the literal %q", where, key.Value, m[1])
				}
				if val.Kind == yaml.ScalarNode && val.Value != "" && !strings.Contains(val.Value, "${{") && !doctor.PinnedRef(val.Value) {
					t.Errorf("%s: %s is the movable %q", where, key.Value, val.Value)
				}
			}
			// An input named *ref must not default to anything.
			if strings.HasSuffix(path, ".inputs") && strings.HasSuffix(key.Value, "ref") && val.Kind == yaml.MappingNode {
				if d := mapValue(val, "default"); d != nil && d.Value != "" {
					t.Errorf("%s: input %s defaults to %q", where, key.Value, d.Value)
				}
			}
		})
	}
}

func TestUsesPinned(t *testing.T) {
	sha := strings.Repeat("a", 40)
	for uses, ok := range map[string]bool{
		"./.mention-runner": true, "actions/checkout@" + sha: true, "actions/checkout@v4": false, "actions/checkout@main": false,
		"actions/checkout": false, "mention-runner/mention-runner/.github/workflows/agent-run.yml@v1.2.3": true,
		"mention-runner/mention-runner/.github/workflows/agent-run.yml@v1":     false,
		"mention-runner/mention-runner/.github/workflows/agent-run.yml@" + sha: true,
	} {
		assert.Equal(t, ok, usesPinned(uses) == "", uses)
	}
}

// walk calls fn for every key/value pair of every mapping under n.
func walk(n *yaml.Node, path string, fn func(path string, key, val *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			walk(c, path, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			fn(path, k, v)
			walk(v, path+"."+k.Value, fn)
		}
	}
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
