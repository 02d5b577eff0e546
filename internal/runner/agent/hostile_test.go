package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/checkout"
	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
	"github.com/mention-runner/mention-runner/internal/testrig/hangguard"
	"github.com/mention-runner/mention-runner/internal/testrig/hostile"
)

// hostileTarget commits a hostile repository (internal/testrig/hostile) as
// octo/hello's main branch on a file:// "server", fetches it the way the
// fetch job does, and points the fixture's agent stage at the pack. It
// returns the canary directory and the canaries.
func hostileTarget(t *testing.T, f *fixture) (string, []hostile.Canary) {
	t.Helper()
	canaryDir := t.TempDir()
	src := t.TempDir()
	canaries, err := hostile.WriteRepo(src, canaryDir, false)
	require.NoError(t, err)
	g := gitexec.Isolated(src, "", 0)
	g.Timeout = 60e9
	ctx := context.Background()
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=Mallory", "-c", "user.email=m@example.com", "commit", "--quiet", "-m", "hostile"},
	} {
		_, err := g.Run(ctx, args...)
		require.NoError(t, err)
	}
	root := t.TempDir()
	bare := filepath.Join(root, "octo", "hello.git")
	_, err = g.Run(ctx, "clone", "--quiet", "--bare", src, bare)
	require.NoError(t, err)
	target, err := checkout.FromContext(f.context)
	require.NoError(t, err)
	art := filepath.Join(f.dir, "target-code")
	_, err = checkout.Fetch(ctx, target, checkout.FetchOptions{ServerURL: "file://" + root, OutDir: art})
	require.NoError(t, err)
	f.env["MR_TARGET_DIR"] = art
	// a loaded machine can be slow; the limit is not what these tests test
	f.env["MR_TIMEOUT"] = hangguard.EngineTimeout
	f.env["MR_WORKSPACE"] = filepath.Join(f.dir, "work")
	require.NoError(t, os.RemoveAll(filepath.Join(f.dir, "target")))
	return canaryDir, canaries
}

// The real Claude Code with the default tools on the hostile repository
// (none of its hooks, settings, MCP servers, commands, agents, skills or
// instructions runs or configures the engine; the model reads the
// checkout and CLAUDE.md as data, nothing outside it, and has no shell or
// file-writing tool) is internal/testrig/e2e's TestFlowClaude: the same engine
// configuration (default tools, 8 turns), whose one CLI start also
// carries the whole flow.
