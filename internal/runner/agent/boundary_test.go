package agent

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentJobPackages run in the agent job (`runner agent` and the gate it
// starts as `runner mcp`), next to the model and the target's files.
var agentJobPackages = []string{
	"github.com/mention-runner/mention-runner/internal/runner/agent",
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate",
	"github.com/mention-runner/mention-runner/internal/runner/agent/engine/...",
}

// writeClients can write to GitHub; none may be linked into code that runs
// in the agent job, so a bug there can never turn into a write.
// (golang.org/x/oauth2 is allowed: the MCP SDK links it for its own client
// auth; it holds no token and speaks no GitHub API.)
var writeClients = []string{
	"github.com/google/go-github/",
	"github.com/mention-runner/mention-runner/internal/core/ghclient",
	"github.com/mention-runner/mention-runner/internal/core/blockfile",
	"github.com/mention-runner/mention-runner/internal/core/repofile",
	"github.com/mention-runner/mention-runner/internal/runner/publish",
	"github.com/mention-runner/mention-runner/internal/runner/shardstore",
	"github.com/mention-runner/mention-runner/internal/runner/assemble",
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch",
}

// TestAgentJobCannotImportGitHubWriteClient: the build itself keeps the
// write client out of the agent job. `go list -deps` sees every package
// the agent job's code links, test files excluded.
func TestAgentJobCannotImportGitHubWriteClient(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go tool is needed to list imports: %v", err)
	}
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .DepsErrors}} ERROR:{{.Err}}{{end}}`}, agentJobPackages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/mention-runner/mention-runner/internal/runner/agent/gate")
	for _, d := range deps {
		require.False(t, strings.HasPrefix(d, "ERROR:"), "go list: %s", out)
		for _, w := range writeClients {
			assert.False(t, strings.HasPrefix(d, w), "%s is linked into the agent job: it can write to GitHub", d)
		}
	}
}
