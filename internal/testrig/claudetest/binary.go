// Package claudetest runs the real Claude Code CLI offline in tests: it
// finds the pinned binary (tools.mk), builds an isolated environment that
// points Claude Code at a fakemodel server, runs it under a hard timeout,
// and provides a tiny MCP "gate" server for it to call.
package claudetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Environment variables the helpers read.
const (
	// BinEnv overrides where the claude binary is.
	BinEnv = "CLAUDE_BIN"
	// RequireEnv=1 makes a missing binary fail tests instead of skipping them.
	RequireEnv = "MENTION_RUNNER_REQUIRE_CLAUDE"
)

// relBin is the binary tools.mk installs, relative to the module root.
const relBin = "tools/claude-code/node_modules/.bin/claude"

// ErrNoBinary means Claude Code is not installed where we looked.
var ErrNoBinary = errors.New("engine binary not found")

// Tool is a pinned engine CLI the tests run (tools.mk installs each).
type Tool struct {
	Name       string // for messages
	BinEnv     string // overrides where the binary is
	RelBin     string // the pinned binary, relative to the module root
	MakeTarget string // what installs it
	RequireEnv string // =1 makes a missing binary fail tests instead of skipping them
}

// The engine CLIs.
var (
	ClaudeCode = Tool{Name: "Claude Code", BinEnv: BinEnv, RelBin: relBin, MakeTarget: "claude-code", RequireEnv: RequireEnv}
	Codex      = Tool{Name: "Codex", BinEnv: "CODEX_BIN", RelBin: "tools/codex/node_modules/.bin/codex", MakeTarget: "codex", RequireEnv: RequireEnginesEnv}
	GeminiCLI  = Tool{Name: "Gemini CLI", BinEnv: "GEMINI_BIN", RelBin: "tools/gemini-cli/node_modules/.bin/gemini", MakeTarget: "gemini-cli", RequireEnv: RequireEnginesEnv}
)

// RequireEnginesEnv=1 makes a missing Codex or Gemini CLI fail tests.
const RequireEnginesEnv = "MENTION_RUNNER_REQUIRE_ENGINES"

// FindBinary returns the claude binary: $CLAUDE_BIN, else the pinned one
// under the module root found by walking up from dir.
func FindBinary(getenv func(string) string, dir string) (string, error) {
	return ClaudeCode.Find(getenv, dir)
}

// Binary returns the claude binary for a test, skipping the test when it is
// missing unless MENTION_RUNNER_REQUIRE_CLAUDE=1, which makes it fail.
func Binary(t testing.TB) string {
	t.Helper()
	return ClaudeCode.Binary(t)
}

// Find returns the tool's binary: $BinEnv, else the pinned one under the
// module root found by walking up from dir.
func (tl Tool) Find(getenv func(string) string, dir string) (string, error) {
	if p := getenv(tl.BinEnv); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s: %w (not an executable file)", tl.BinEnv, p, ErrNoBinary)
	}
	root, err := moduleRoot(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoBinary, err)
	}
	p := filepath.Join(root, tl.RelBin)
	if !isExecutable(p) {
		return "", fmt.Errorf("%s: %w (run `make %s`)", p, ErrNoBinary, tl.MakeTarget)
	}
	return p, nil
}

// Binary returns the tool's binary for a test, skipping the test when it
// is missing unless RequireEnv=1, which makes it fail. With -short every
// real engine CLI test skips: it is the inner loop's budget.
func (tl Tool) Binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipping real %s test in -short mode (make test runs it)", tl.Name)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	p, err := tl.Find(os.Getenv, wd)
	if err != nil {
		if os.Getenv(tl.RequireEnv) == "1" {
			t.Fatalf("%v; %s=1 requires it", err, tl.RequireEnv)
		}
		t.Skipf("skipping real %s test: %v (set %s=1 to fail instead)", tl.Name, err, tl.RequireEnv)
	}
	return p
}

func isExecutable(p string) bool {
	st, err := os.Stat(p) // follows the node_modules/.bin symlink
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// moduleRoot walks up from dir to the directory holding go.mod.
func moduleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("module root from %s: %w", dir, err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		d = parent
	}
}
