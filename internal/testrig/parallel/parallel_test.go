package parallel

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAtLeast(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string // the command line
		n, procs int
		want     int
	}{
		{"raised above GOMAXPROCS", nil, 4, 2, 4},
		{"GOMAXPROCS already enough", nil, 4, 8, 8},
		{"the command line wins", []string{"-test.parallel=1"}, 4, 2, 1},
		{"the command line wins even when equal to the default", []string{"-test.parallel=2"}, 4, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			p := fs.Int("test.parallel", tc.procs, "")
			require.NoError(t, fs.Parse(tc.args))
			atLeast(fs, tc.n, tc.procs)
			assert.Equal(t, tc.want, *p)
		})
	}
}
