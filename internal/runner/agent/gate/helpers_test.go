package gate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

// serveEnv makes the test binary act as `runner mcp --config FILE` (see
// gatetest, which cannot be imported here without a cycle).
const serveEnv = "MR_GATE_INTERNAL_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		cfg, err := LoadConfig(os.Args[len(os.Args)-1])
		if err == nil {
			err = Serve(context.Background(), cfg, "test", &mcp.StdioTransport{})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(gittemplate.Run(m, clonedRepo))
}

const hereRepo = "octo/app"

// baseConfig is a run on octo/app#7 with the default ceilings and no flags.
func baseConfig(t testing.TB) Config {
	t.Helper()
	ceil := policy.DefaultCeilings()
	return Config{
		RunDir:   t.TempDir(),
		Bot:      "robot",
		Here:     Thread{Repo: hereRepo, Number: 7},
		Ceilings: &ceil,
		JobID:    "job-1",
	}
}

// withFlags sets the policy from a !cfg line.
func withFlags(t testing.TB, c Config, line string) Config {
	t.Helper()
	f, err := policy.ParseFlagLine(line)
	require.NoError(t, err)
	c.Flags = f.String()
	return c
}

// connect serves a gate for c over in-memory transports and returns a client.
func connect(t testing.TB, c Config) *mcp.ClientSession {
	t.Helper()
	g, err := New(c)
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := g.Server("test").Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait(); cancel() })
	return cs
}

// call calls a tool and returns its text and IsError.
func call(t testing.TB, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

func readOutputs(t testing.TB, c Config) []outputs.Entry {
	t.Helper()
	es, err := outputs.ReadFile(filepath.Join(c.RunDir, contract.OutputsFile))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return es
}

func readLog(t testing.TB, c Config) []Record {
	t.Helper()
	rs, err := ReadLog(filepath.Join(c.RunDir, contract.GateLogFile))
	require.NoError(t, err)
	return rs
}

func comment(repo string, n int, body string) map[string]any {
	return map[string]any{"repo": repo, "number": n, "body": body}
}

// gitRepo makes a checkout with an origin/main remote-tracking branch, as
// actions/checkout leaves it.
// gitRepo is a copy of clonedRepo of the test's own, its origin URL
// pointing at the copy's origin.
func gitRepo(t testing.TB) string {
	t.Helper()
	return filepath.Join(clonedRepo.Copy(t, "work/.git/config"), "work")
}

// clonedRepo holds origin (README.md on main, one commit) and work, its
// clone.
var clonedRepo = gittemplate.New(func(t testing.TB, dir string) {
	origin, work := filepath.Join(dir, "origin"), filepath.Join(dir, "work")
	require.NoError(t, os.MkdirAll(origin, 0o755))
	run(t, origin, "init", "--quiet", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(origin, "README.md"), []byte("hi\n"), 0o644))
	run(t, origin, "add", "-A")
	run(t, origin, "commit", "--quiet", "-m", "initial")
	run(t, dir, "clone", "--quiet", origin, work)
})

func commitFile(t testing.TB, dir, path, content string) {
	t.Helper()
	full := filepath.Join(dir, path)
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "--quiet", "-m", "change "+path)
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	// no maintenance.auto: a commit would start one more git process
	cmd := exec.Command("git", append([]string{"-c", "user.name=Agent", "-c", "user.email=agent@example.com", "-c", "commit.gpgsign=false", "-c", "maintenance.auto=false", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "git %v: %s", args, errb.String())
	return strings.TrimSpace(out.String())
}

// blockedList is an opt-out snapshot of patterns.
func blockedList(patterns ...string) *blocklist.List {
	l := &blocklist.List{}
	for _, p := range patterns {
		l.Entries = append(l.Entries, blocklist.Entry{Pattern: p})
	}
	return l
}
