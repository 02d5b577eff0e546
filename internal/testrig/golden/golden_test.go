package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheck: a match passes, -update writes (directories included), and a
// mismatch or a missing file fails the test it runs in.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.golden")

	*update = true
	CheckString(t, path, "hello\n")
	*update = false
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))
	CheckString(t, path, "hello\n")

	for name, fn := range map[string]func(tb testing.TB){
		"mismatch": func(tb testing.TB) { CheckString(tb, path, "other\n") },
		"missing":  func(tb testing.TB) { CheckString(tb, filepath.Join(dir, "none"), "x") },
		"json":     func(tb testing.TB) { CheckJSON(tb, path, []byte(`{"a":1}`)) },
	} {
		ft := &fakeT{TB: t}
		func() {
			defer func() { _ = recover() }() // require's FailNow
			fn(ft)
		}()
		assert.True(t, ft.failed, name)
	}
	require.NoError(t, os.WriteFile(path, []byte(`{"a": 1, "b": [2]}`), 0o644))
	CheckJSON(t, path, []byte(`{"b":[2],"a":1}`))
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true; panic("failnow") }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
func (f *fakeT) Name() string          { return "fake" }
func (f *fakeT) Log(...any)            {}
func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) Fail()                 { f.failed = true }
func (f *fakeT) Failed() bool          { return f.failed }
func (f *fakeT) Error(...any)          { f.failed = true }
func (f *fakeT) Fatal(...any)          { f.failed = true; panic("fatal") }
func (f *fakeT) Skip(...any)           {}
func (f *fakeT) Skipf(string, ...any)  {}
func (f *fakeT) SkipNow()              {}
func (f *fakeT) Skipped() bool         { return false }
func (f *fakeT) Cleanup(func())        {}
func (f *fakeT) Setenv(string, string) {}
func (f *fakeT) TempDir() string       { return "" }
