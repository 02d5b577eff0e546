package localfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	_, real := os.ReadFile(filepath.Join(t.TempDir(), "nope", "x"))
	tests := []struct {
		name string
		err  error
		what string // "" = not local
	}{
		{"full disk", &os.PathError{Op: "write", Path: "/r/events.jsonl", Err: syscall.ENOSPC}, "the disk is full"},
		{"quota", fmt.Errorf("wrapped: %w", &os.PathError{Op: "write", Path: "/r/x", Err: syscall.EDQUOT}), "quota"},
		{"read-only", &os.PathError{Op: "mkdir", Path: "/r", Err: syscall.EROFS}, "read-only"},
		{"permission", &os.PathError{Op: "open", Path: "/r/outputs.jsonl", Err: syscall.EACCES}, "not writable"},
		{"rename", &os.LinkError{Op: "rename", Old: "/r/.t", New: "/r/outcome.json", Err: syscall.ENOSPC}, "the disk is full"},
		{"real missing file", real, "missing"},
		{"other errno", &os.PathError{Op: "write", Path: "/r/x", Err: syscall.EINVAL}, ""},
		{"not a path error", errors.New("no space left on device"), ""},
		{"nil", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Classify(tc.err)
			if tc.what == "" {
				assert.Nil(t, f)
				return
			}
			require.NotNil(t, f)
			assert.Contains(t, f.What, tc.what)
			assert.NotEmpty(t, f.Path)
			assert.Contains(t, f.String(), f.Path)
		})
	}
}

func TestInject(t *testing.T) {
	dir := t.TempDir()
	in := &Inject{Faults: []Fault{
		{Op: "write", Path: "events.jsonl", Err: syscall.ENOSPC, After: 2},
		{Op: "mkdir", Path: "ro", Err: syscall.EROFS},
		{Op: "open", Path: "*.lock", Err: syscall.EACCES},
	}}
	f, err := in.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		_, err = f.Write([]byte("x\n"))
		require.NoError(t, err)
	}
	_, err = f.Write([]byte("x\n"))
	assert.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "x\nx\n", string(b), "the failed write wrote nothing")

	assert.ErrorIs(t, in.MkdirAll(filepath.Join(dir, "ro"), 0o755), syscall.EROFS)
	require.NoError(t, in.MkdirAll(filepath.Join(dir, "rw"), 0o755))
	_, err = in.OpenFile(filepath.Join(dir, "a.lock"), os.O_CREATE|os.O_WRONLY, 0o644)
	assert.ErrorIs(t, err, syscall.EACCES)
	require.NoError(t, in.WriteFile(filepath.Join(dir, "other"), []byte("ok"), 0o644))
	assert.NotNil(t, Classify(in.MkdirAll(filepath.Join(dir, "ro"), 0o755)))
}
