package benchreport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Usage is what a finished child process cost.
type Usage struct {
	Wall      time.Duration `json:"wall_ns"`
	CPU       time.Duration `json:"cpu_ns"`      // user + system time of the child
	MaxRSSKiB int64         `json:"max_rss_kib"` // peak resident set size of the child (Linux ru_maxrss)
}

// MaxRSSMiB is the peak RSS in MiB.
func (u Usage) MaxRSSMiB() float64 { return float64(u.MaxRSSKiB) / 1024 }

// RunChild runs cmd to completion and reports its wall time, CPU time and
// peak RSS from the kernel's rusage of that child. Linux counts in a
// child's peak the memory of the process that started it (the exec
// inherits the parent's high-water mark), so a peak that must not include
// this process's memory is measured through Measure in a fresh helper
// process (benchreport measure). A failed command returns its stderr in
// the error.
func RunChild(ctx context.Context, cmd *exec.Cmd) (Usage, error) {
	if ctx.Err() != nil {
		return Usage{}, ctx.Err()
	}
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	start := time.Now()
	err := cmd.Run()
	u := Usage{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u.MaxRSSKiB = int64(ru.Maxrss) // KiB on Linux
			u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	if err != nil {
		return u, fmt.Errorf("%s: %w: %s", cmd.Path, err, bytes.TrimSpace(lastBytes(stderr.Bytes(), 2000)))
	}
	return u, nil
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Measure runs args in a fresh helper process (`helperBin measure --
// args…`), which starts the command, waits for it and prints its Usage as
// JSON: the peak RSS then includes only the small helper's memory, not
// this process's. The command's output is discarded; dir is its working
// directory.
func Measure(ctx context.Context, helperBin, dir string, args ...string) (Usage, error) {
	cmd := exec.CommandContext(ctx, helperBin, append([]string{"measure", "--"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Usage{}, fmt.Errorf("%s: %w: %s", args[0], err, bytes.TrimSpace(lastBytes(stderr.Bytes(), 2000)))
	}
	var u Usage
	if err := json.Unmarshal(stdout.Bytes(), &u); err != nil {
		return Usage{}, fmt.Errorf("measure %s: read the helper's report: %w", args[0], err)
	}
	return u, nil
}
