package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/devtools/benchreport"
)

// goBench runs one package's benchmarks matching pattern and parses them.
func goBench(ctx context.Context, pkg, pattern string, extra ...string) ([]benchreport.GoBench, string, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-count", "1"}, extra...)
	args = append(args, pkg)
	command := "go " + strings.Join(quoteArgs(args), " ")
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin(), args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return nil, command, fmt.Errorf("%s: %w: %s", command, err, tail(out.String(), 800))
	}
	res, err := benchreport.ParseGoBench(&out)
	return res, command, err
}

func goBin() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// quoteArgs quotes what a shell would mangle, so commands paste as is.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$*|() ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
