// Package golden compares test output with files kept under testdata/ and
// rewrites them when the test runs with -update (`go test ./x -update`).
// Every golden test uses it, so the flag and its rules live in one place.
// It is a test rig: only _test.go files import it.
package golden

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files (and other generated fixtures) instead of comparing with them")

// Updating reports whether the test runs with -update.
func Updating() bool { return *update }

// Check compares got with the file at path, or writes got there (creating
// its directory) under -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	want := read(t, path, got)
	assert.Equal(t, string(want), string(got), "golden file %s (rewrite with -update)", path)
}

// CheckString is Check for text.
func CheckString(t testing.TB, path, got string) {
	t.Helper()
	Check(t, path, []byte(got))
}

// CheckJSON is Check comparing as JSON values, so layout does not matter.
func CheckJSON(t testing.TB, path string, got []byte) {
	t.Helper()
	want := read(t, path, got)
	require.True(t, json.Valid(got), "output for %s is not JSON", path)
	assert.JSONEq(t, string(want), string(got), "golden file %s (rewrite with -update)", path)
}

func read(t testing.TB, path string, got []byte) []byte {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: run the test with -update to create it", path)
	return want
}
