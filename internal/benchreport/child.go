package benchreport

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Usage is what a finished child process cost.
type Usage struct {
	Wall      time.Duration
	CPU       time.Duration // user + system time of the child
	MaxRSSKiB int64         // peak resident set size of the child (Linux ru_maxrss)
}

// MaxRSSMiB is the peak RSS in MiB.
func (u Usage) MaxRSSMiB() float64 { return float64(u.MaxRSSKiB) / 1024 }

// RunChild runs cmd to completion and reports its wall time and peak RSS.
// The peak comes from the kernel's rusage of that child alone, so it is not
// blurred by this process's own memory. A failed command returns its
// stderr in the error.
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
