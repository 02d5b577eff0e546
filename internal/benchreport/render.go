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

// RenderStream writes a stream-json log of at least size bytes built from
// seed to a temp file, renders it with `runnerBin render --from-stream` in a
// child process (output discarded) and reports the child's wall time and
// peak RSS. The log is removed afterwards.
func RenderStream(ctx context.Context, runnerBin string, seed StreamSeed, size int64) (RenderResult, error) {
	f, err := os.CreateTemp("", "benchreport-stream-*.jsonl")
	if err != nil {
		return RenderResult{}, fmt.Errorf("render bench: %w", err)
	}
	defer os.Remove(f.Name())
	n, err := WriteStreamLog(f, seed, size)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return RenderResult{}, fmt.Errorf("render bench: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runnerBin, "render", "--from-stream", f.Name())
	cmd.Stdout = nil // discarded: the child writes to /dev/null
	cmd.Dir = filepath.Dir(f.Name())
	u, err := RunChild(ctx, cmd)
	if err != nil {
		return RenderResult{}, fmt.Errorf("render bench: %w", err)
	}
	return RenderResult{LogBytes: n, Usage: u}, nil
}

// RenderVersusFloor writes one log of size bytes and times, on that same
// file, `runnerBin render --from-stream` and the floor (`floorBin floor
// render`, encoding/json.Valid on every line), one after the other.
func RenderVersusFloor(ctx context.Context, runnerBin, floorBin string, seed StreamSeed, size int64) (ours RenderResult, floor RenderResult, err error) {
	f, err := os.CreateTemp("", "benchreport-stream-*.jsonl")
	if err != nil {
		return ours, floor, fmt.Errorf("render bench: %w", err)
	}
	defer os.Remove(f.Name())
	n, err := WriteStreamLog(f, seed, size)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return ours, floor, fmt.Errorf("render bench: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for _, args := range [][]string{{runnerBin, "render", "--from-stream", f.Name()}, {floorBin, "floor", "render", f.Name()}} {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = filepath.Dir(f.Name())
		u, err := RunChild(ctx, cmd)
		if err != nil {
			return ours, floor, fmt.Errorf("render bench: %w", err)
		}
		if args[0] == runnerBin {
			ours = RenderResult{LogBytes: n, Usage: u}
		} else {
			floor = RenderResult{LogBytes: n, Usage: u}
		}
	}
	return ours, floor, nil
}
