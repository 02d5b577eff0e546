// Package e2e runs the whole mention-runner flow the way GitHub runs it:
// the dispatcher and the three runner jobs as separate processes with
// separate environments against the simulator, files passed between jobs
// as artifacts, and assertions on the simulator's final state.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/demo"
)

// bins are built once for every test in the package.
var bins demo.Binaries

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mention-runner-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root, err := demo.ModuleRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if bins, err = demo.Build(ctx, root, dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}
