package benchreport

import (
	"context"
	"fmt"
	"os"
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
// (output discarded), measured through helperBin (see Measure).
func RenderFile(ctx context.Context, helperBin, runnerBin, path string, size int64) (RenderResult, error) {
	return runOnLog(ctx, helperBin, path, size, runnerBin, "render", "--from-stream", path)
}

// FloorFile runs the render floor (`floorBin floor render LOG`,
// encoding/json.Valid on every line) on the same log, measured the same way.
func FloorFile(ctx context.Context, helperBin, floorBin, path string, size int64) (RenderResult, error) {
	return runOnLog(ctx, helperBin, path, size, floorBin, "floor", "render", path)
}

func runOnLog(ctx context.Context, helperBin, path string, size int64, args ...string) (RenderResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	u, err := Measure(ctx, helperBin, filepath.Dir(path), args...)
	if err != nil {
		return RenderResult{}, fmt.Errorf("render bench: %w", err)
	}
	return RenderResult{LogBytes: size, Usage: u}, nil
}
