// Package e2e runs the whole mention-runner flow the way GitHub runs it:
// the dispatcher and the three runner jobs as separate processes with
// separate environments against the simulator, files passed between jobs
// as artifacts, and assertions on the simulator's final state.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/hangguard"
	"github.com/mention-runner/mention-runner/internal/testrig/parallel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bins are built once for every test in the package.
var bins demo.Binaries

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	// each flow mostly waits on its processes (dispatcher, runner jobs,
	// engine CLI): four at once unless -parallel was given
	parallel.AtLeast(4)
	if testing.Short() {
		return m.Run() // every test skips (needBins); nothing to build
	}
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
	if bins, err = demo.BuildOrPrebuilt(ctx, root, dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

// needBins skips an end-to-end test in -short mode, where the binaries are
// not built: the whole flow is make test's work, not the inner loop's.
func needBins(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped in -short mode (make test runs it)")
	}
}

// Pacing between writes is for GitHub's secondary limits (ghclient's
// pacer tests and cmd/dispatcher's WRITE_GAP test cover it); in a
// simulated world it would only make each flow wait a second per write.
// MR_TIMEOUT: the real engines' hang guard, under the job process's limit.
var (
	runnerSettings     = []string{"MR_WRITE_GAP=0s", "MR_TIMEOUT=" + hangguard.EngineTimeout}
	dispatcherSettings = []string{"WRITE_GAP=0s"}
)

// settings returns the runner settings for a flow: no write gap, the hang
// guard, then extra.
func settings(extra ...string) []string {
	return append(append([]string{}, runnerSettings...), extra...)
}

// The engine's own timeout must fire before the job process is killed, or
// a slow engine shows as a killed job instead of the run's timeout outcome.
func TestHangGuardUnderStageTimeout(t *testing.T) {
	d, err := time.ParseDuration(hangguard.EngineTimeout)
	require.NoError(t, err)
	assert.Less(t, d, demo.DefaultStageTimeout)
}
