package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/mention-runner/mention-runner/internal/testrig/prebuilt"
)

// Binaries are the two commands the flow runs as separate processes.
type Binaries struct {
	Dispatcher string
	Runner     string
}

// buildTimeout bounds one `go build` (a cold cache on 2 cores is the worst case).
const buildTimeout = 5 * time.Minute

// ModuleRoot walks up from dir to the directory holding go.mod.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("module root: no go.mod above %s", dir)
		}
		d = parent
	}
}

// Build compiles cmd/dispatcher and cmd/runner of the module at root into
// outDir, once, as a workflow would build the action.
func Build(ctx context.Context, root, outDir string) (Binaries, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("build: %w", err)
	}
	abs, err := filepath.Abs(outDir)
	if err != nil {
		return Binaries{}, fmt.Errorf("build: %w", err)
	}
	b := Binaries{Dispatcher: filepath.Join(abs, "dispatcher"), Runner: filepath.Join(abs, "runner")}
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	// One go invocation builds both and shares the work.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", abs+string(filepath.Separator), "./cmd/dispatcher", "./cmd/runner")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Binaries{}, fmt.Errorf("go build ./cmd/dispatcher ./cmd/runner: %w\n%s", err, out.String())
	}
	return b, nil
}

// BuildOrPrebuilt returns the binaries `make test` built once for every
// test package (testkit/prebuilt), or, outside make test, builds them into
// outDir.
func BuildOrPrebuilt(ctx context.Context, root, outDir string) (Binaries, error) {
	p, ok, err := prebuilt.Commands("dispatcher", "runner")
	if err != nil {
		return Binaries{}, err
	}
	if ok {
		return Binaries{Dispatcher: p[0], Runner: p[1]}, nil
	}
	return Build(ctx, root, outDir)
}
