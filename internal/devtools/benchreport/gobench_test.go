package benchreport

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleBench = `goos: linux
goarch: amd64
pkg: github.com/mention-runner/mention-runner/internal/core/transport
cpu: AMD EPYC
BenchmarkEncodeAssemble10MiB-2   	       2	 653382739 ns/op	  16.05 MB/s	35487812 B/op	    1779 allocs/op
BenchmarkDispatch
    loadtest_test.go:12: some log line
BenchmarkDispatch/issue-2    	      10	  123.5 ms/mention	 7.000 requests/mention
PASS
ok  	github.com/mention-runner/mention-runner/internal/core/transport	1.455s
`

func TestParseGoBench(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []GoBench
		wantErr string
	}{
		{"real output", sampleBench, []GoBench{
			{Name: "BenchmarkEncodeAssemble10MiB", N: 2, Metrics: map[string]float64{"ns/op": 653382739, "MB/s": 16.05, "B/op": 35487812, "allocs/op": 1779}},
			{Name: "BenchmarkDispatch/issue", N: 10, Metrics: map[string]float64{"ms/mention": 123.5, "requests/mention": 7}},
		}, ""},
		{"empty", "", nil, ""},
		{"name without procs suffix", "BenchmarkX 5 1 ns/op\n", []GoBench{{Name: "BenchmarkX", N: 5, Metrics: map[string]float64{"ns/op": 1}}}, ""},
		{"value without unit", "BenchmarkX-2 5 1 ns/op 7\n", nil, "value without unit"},
		{"bad number", "BenchmarkX-2 5 abc ns/op\n", nil, `metric "ns/op"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGoBench(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFind(t *testing.T) {
	res, err := ParseGoBench(strings.NewReader(sampleBench))
	require.NoError(t, err)
	b, ok := Find(res, "BenchmarkEncodeAssemble10MiB")
	require.True(t, ok)
	assert.InDelta(t, 16.05, b.Metrics["MB/s"], 1e-9)
	_, ok = Find(res, "BenchmarkNope")
	assert.False(t, ok)
}

func FuzzParseGoBench(f *testing.F) {
	f.Add(sampleBench)
	f.Add("BenchmarkX-2 1 2 ns/op\n")
	f.Add("Benchmark")
	f.Fuzz(func(t *testing.T, in string) {
		res, err := ParseGoBench(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range res {
			if !strings.HasPrefix(r.Name, "Benchmark") || r.Metrics == nil {
				t.Fatalf("bad result %+v", r)
			}
		}
	})
}
