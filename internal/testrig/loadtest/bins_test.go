package loadtest

import (
	"context"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/parallel"
)

// The real dispatcher and runner, built once for every test of the
// package that starts them (a build is seconds of CPU), into a directory
// TestMain removes.
var (
	binsOnce sync.Once
	binsDir  string
	built    demo.Binaries
	binsErr  error
)

func TestMain(m *testing.M) {
	// The kill tests mostly wait on real processes (the dispatcher's
	// one-second write gaps); with -parallel at its default (GOMAXPROCS,
	// 2 here) two of them could hold every slot while the CPU idles. Four
	// at once unless -parallel was given.
	flag.Parse()
	parallel.AtLeast(4)
	code := m.Run()
	if binsDir != "" {
		_ = os.RemoveAll(binsDir)
	}
	os.Exit(code)
}

// builtBinaries returns the real binaries, building them on first use.
func builtBinaries(t *testing.T, ctx context.Context) demo.Binaries {
	t.Helper()
	binsOnce.Do(func() {
		root, err := demo.ModuleRoot(".")
		if err != nil {
			binsErr = err
			return
		}
		if binsDir, binsErr = os.MkdirTemp("", "loadtest-bin-"); binsErr != nil {
			return
		}
		// Not ctx: a test's context ends with that test, the binaries
		// serve the others too.
		built, binsErr = demo.BuildOrPrebuilt(context.WithoutCancel(ctx), root, binsDir)
	})
	require.NoError(t, binsErr)
	return built
}
