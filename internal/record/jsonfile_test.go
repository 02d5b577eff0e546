package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		old     string // existing file content ("" = none)
		want    string
		wantErr string
	}{
		{"indented with newline", map[string]int{"a": 1}, "", "{\n  \"a\": 1\n}\n", ""},
		{"secret redacted", map[string]string{"t": ghToken}, "", "{\n  \"t\": \"[REDACTED:github-token]\"\n}\n", ""},
		{"replaces whole", []int{}, "{\"long\": \"old content\"}\n", "[]\n", ""},
		{"unencodable", map[string]any{"f": func() {}}, "keep\n", "keep\n", "record: encode out.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if tt.old != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.old), 0o600))
			}
			err := WriteJSON(path, tt.v)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				info, err := os.Stat(path)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left behind")
		})
	}
}

func TestWriteJSONMissingDir(t *testing.T) {
	err := WriteJSON(filepath.Join(t.TempDir(), "absent", "out.json"), 1)
	require.ErrorContains(t, err, "record: write")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
