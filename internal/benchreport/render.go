package benchreport

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// RenderResult is the figure for `runner render --from-stream`.
type RenderResult struct {
	LogBytes int64
	Usage
}

// MBps is the rendering throughput (10^6 bytes per second, as go test).
func (r RenderResult) MBps() float64 {
	return float64(r.LogBytes) / 1e6 / r.Wall.Seconds()
}

// WriteStreamFile writes a stream-json log of at least size bytes built
// from seed to a new file in dir and returns its path and size.
func WriteStreamFile(dir string, seed StreamSeed, size int64) (string, int64, error) {
	f, err := os.CreateTemp(dir, "stream-*.jsonl")
	if err != nil {
		return "", 0, fmt.Errorf("render bench: %w", err)
	}
	n, err := WriteStreamLog(f, seed, size)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, fmt.Errorf("render bench: %w", err)
	}
	return f.Name(), n, nil
}

// RenderFile renders the log at path with `runnerBin render --from-stream`
// in a child process (output discarded) and reports what the child cost.
func RenderFile(ctx context.Context, runnerBin, path string, size int64) (RenderResult, error) {
	return runOnLog(ctx, path, size, runnerBin, "render", "--from-stream", path)
}

// FloorFile runs the render floor (`floorBin floor render LOG`,
// encoding/json.Valid on every line) on the same log.
func FloorFile(ctx context.Context, floorBin, path string, size int64) (RenderResult, error) {
	return runOnLog(ctx, path, size, floorBin, "floor", "render", path)
}

func runOnLog(ctx context.Context, path string, size int64, bin string, args ...string) (RenderResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Dir(path)
	u, err := RunChild(ctx, cmd)
	if err != nil {
		return RenderResult{}, fmt.Errorf("render bench: %w", err)
	}
	return RenderResult{LogBytes: size, Usage: u}, nil
}
