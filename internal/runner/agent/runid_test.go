package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContinueRecord: a re-run of the agent job (attempt 2) continues the
// record assemble started in attempt 1; its own directory wins when it is
// there, and anything unclear keeps the attempt's own name.
func TestContinueRecord(t *testing.T) {
	cases := []struct {
		name  string
		dirs  []string
		runID string
		want  string
	}{
		{"same attempt", []string{"7001-1"}, "7001-1", "7001-1"},
		{"re-run of the agent job", []string{"7001-1"}, "7001-2", "7001-1"},
		{"its own is there too", []string{"7001-1", "7001-2"}, "7001-2", "7001-2"},
		{"two earlier attempts", []string{"7001-1", "7001-2"}, "7001-3", "7001-3"},
		{"another run's record", []string{"7002-1"}, "7001-2", "7001-2"},
		{"a longer run id", []string{"70011-1"}, "7001-2", "7001-2"},
		{"nothing there", nil, "7001-1", "7001-1"},
		{"local run", []string{"local-aa"}, "local-bb", "local-bb"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range tc.dirs {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
			}
			assert.Equal(t, tc.want, continueRecord(dir, tc.runID))
		})
	}
	assert.Equal(t, "7001-2", continueRecord(filepath.Join(t.TempDir(), "missing"), "7001-2"))
}
