package benchreport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// GoBench is one result line of `go test -bench` output.
type GoBench struct {
	Name    string             // without the -GOMAXPROCS suffix
	N       int64              // iterations
	Metrics map[string]float64 // unit → value: "ns/op", "MB/s", "B/op", "allocs/op", custom units
}

// ParseGoBench reads `go test -bench` output and returns its result lines
// in order. Other lines (goos, PASS, logs) are skipped; a line that starts
// like a result but does not parse is an error, so a format change is seen
// instead of silently dropping a figure.
func ParseGoBench(r io.Reader) ([]GoBench, error) {
	var out []GoBench
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue // a benchmark's name alone: its log output follows
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue // "BenchmarkX  some log text": not a result line
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("bench output line %d: value without unit: %q", n, line)
		}
		b := GoBench{Name: trimProcs(f[0]), N: iters, Metrics: map[string]float64{}}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bench output line %d: metric %q: %w", n, f[i+1], err)
			}
			b.Metrics[f[i+1]] = v
		}
		out = append(out, b)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read bench output: %w", err)
	}
	return out, nil
}

// trimProcs drops the "-8" GOMAXPROCS suffix go test appends.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// Find returns the result named name, if present.
func Find(results []GoBench, name string) (GoBench, bool) {
	for _, r := range results {
		if r.Name == name {
			return r, true
		}
	}
	return GoBench{}, false
}
