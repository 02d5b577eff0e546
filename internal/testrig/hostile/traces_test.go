package hostile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraces(t *testing.T) {
	tests := []struct {
		name  string
		write map[string]string // files written into canaryDir after WriteRepo
		want  []string
	}{
		{"inert", nil, nil},
		{"a canary ran", map[string]string{"node-options": "ran\n"},
			[]string{"node-options (settings env NODE_OPTIONS): ran", "a file appeared in the canary directory: node-options"}},
		{"a stray file", map[string]string{"loot.txt": "x"}, []string{"a file appeared in the canary directory: loot.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			canaryDir := t.TempDir()
			canaries, err := WriteRepo(t.TempDir(), canaryDir, false)
			require.NoError(t, err)
			for name, body := range tc.write {
				require.NoError(t, os.WriteFile(filepath.Join(canaryDir, name), []byte(body), 0o644))
			}
			assert.Equal(t, tc.want, Traces(canaryDir, canaries))
		})
	}
	assert.Len(t, Traces(filepath.Join(t.TempDir(), "missing"), nil), 1, "an unreadable directory is a trace, not silence")
}
