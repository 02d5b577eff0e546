package racebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMakefile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		makefile string
		run      []string // top-level names NORACE_RUN must match
		notRun   []string
		pkgs     []string
		err      string
	}{
		{
			name:     "escaped anchors",
			makefile: "X := 1\nNORACE_RUN := ^(TestA|TestB)$$\nNORACE_PKGS := ./internal/a ./internal/b\nunit:\n\tgo test -run '$(NORACE_RUN)'\n",
			run:      []string{"TestA", "TestB"},
			notRun:   []string{"TestAB", "TestC", "XTestA"},
			pkgs:     []string{"./internal/a", "./internal/b"},
		},
		{name: "no run list", makefile: "NORACE_PKGS := ./internal/a\n", err: "sets no NORACE_RUN"},
		{name: "no packages", makefile: "NORACE_RUN := ^TestA$$\n", err: "sets no NORACE_PKGS"},
		{name: "bad regexp", makefile: "NORACE_RUN := ^(TestA$$\nNORACE_PKGS := ./internal/a\n", err: "NORACE_RUN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := parseMakefile([]byte(tc.makefile))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			for _, name := range tc.run {
				assert.True(t, n.run.MatchString(name), name)
			}
			for _, name := range tc.notRun {
				assert.False(t, n.run.MatchString(name), name)
			}
			assert.Equal(t, tc.pkgs, n.pkgs)
		})
	}
}

func TestCovers(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(filepath.Dir(wd)) // internal/testrig/racebuild → internal
	n, err := parseMakefile([]byte("NORACE_RUN := ^(TestBig|TestHuge)$$\nNORACE_PKGS := ./internal/x ./testrig/racebuild\n"))
	require.NoError(t, err)
	n.root = root
	for _, tc := range []struct {
		name, err string
	}{
		{name: "TestBig"},
		{name: "TestHuge/sub/case"},
		{name: "TestSmall", err: "add ./testrig/racebuild to NORACE_PKGS and TestSmall to NORACE_RUN"},
		{name: "TestBigger", err: "TestBigger runs small under -race"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := n.covers(tc.name)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
	n.pkgs = []string{"./internal/x"}
	assert.ErrorContains(t, n.covers("TestBig"), "add ./testrig/racebuild to NORACE_PKGS")
}

// The module's own Makefile parses, and its list is not empty.
func TestModuleMakefile(t *testing.T) {
	n, err := readMakefile()
	require.NoError(t, err)
	assert.NotEmpty(t, n.pkgs)
	for _, p := range n.pkgs {
		assert.DirExists(t, filepath.Join(n.root, p))
	}
}

// fakeTB records Scale's refusal instead of ending the test.
type fakeTB struct {
	testing.TB
	name, fatal string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Name() string                      { return f.name }
func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

// Scale gives the full size in a normal build; in a race build it gives
// the small size only to a test the Makefile also runs without -race.
func TestScale(t *testing.T) {
	listed := &fakeTB{TB: t, name: "TestRacebuildListed/sub"}
	unlisted := &fakeTB{TB: t, name: "TestScale"}
	if !Enabled {
		assert.Equal(t, 100, Scale(listed, 10, 100))
		assert.Equal(t, 100, Scale(unlisted, 10, 100))
		assert.Empty(t, listed.fatal+unlisted.fatal)
		return
	}
	makefileOnce.Do(func() {}) // this test's own list, not the module's
	saved := makefile
	t.Cleanup(func() { makefile = saved })
	wd, err := os.Getwd()
	require.NoError(t, err)
	makefile = noRace{run: regexp.MustCompile(`^TestRacebuildListed$`), pkgs: []string{"./racebuild"}, root: filepath.Dir(wd)}
	assert.Equal(t, 10, Scale(listed, 10, 100))
	assert.Empty(t, listed.fatal)
	Scale(unlisted, 10, 100)
	assert.Contains(t, unlisted.fatal, "TestScale runs small under -race but the Makefile never runs it at full size")
}
