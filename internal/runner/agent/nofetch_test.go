package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/hostile"
)

// TestNoFetchedCodeRunsNoGit: without the fetch job's code (no
// MR_TARGET_DIR) the runner never runs git in the workspace. A workspace
// that is a git checkout — the old agent job's own checkout of the target,
// here a hostile one whose .git/config defines the filter driver its
// .gitattributes names, plus fsmonitor, hooks, pager, textconv and a
// credential helper — is refused before anything starts; a plain
// workspace runs, and a pull request from it is refused (no checkout the
// runner made). No trap fires either way.
func TestNoFetchedCodeRunsNoGit(t *testing.T) {
	script := `{"tool":"create_pull_request","args":{"repo":"octo/hello","title":"Fix","body":"b"}}` + "\n" +
		`{"tool":"add_comment","args":{"repo":"octo/hello","number":42,"body":"done"}}` + "\n" + `{"text":"Done."}`
	for _, withGitDir := range []bool{true, false} {
		name := map[bool]string{true: "hostile git checkout refused", false: "plain workspace, no pull request"}[withGitDir]
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "@helperbot fix it")
			canaryDir := t.TempDir()
			work := f.env["MR_WORKSPACE"]
			canaries, err := hostile.WriteRepo(work, canaryDir, withGitDir)
			require.NoError(t, err)
			require.FileExists(t, filepath.Join(work, ".gitattributes"))
			p := filepath.Join(t.TempDir(), "script.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(script), 0o644))
			f.env["MR_ENGINE"], f.env["MR_REPLAY_SCRIPT"] = "replay", p

			out, err := f.run(t, nil)
			assert.Empty(t, hostile.Traces(canaryDir, canaries), "the hostile repository ran or wrote something")
			if withGitDir {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "is a git checkout")
				assert.Contains(t, err.Error(), "MR_TARGET_DIR")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, out.Outputs, "the comment only")
			es, err := outputs.ReadFile(filepath.Join(f.runDir(), contract.OutputsFile))
			require.NoError(t, err)
			require.Len(t, es, 1)
			assert.Equal(t, "comment", string(es[0].Kind))
			assert.NoFileExists(t, filepath.Join(f.runDir(), "pr-0.bundle"))
		})
	}
}
