package codex

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/claudetest"
)

// npmLayout writes an npm install of @openai/codex under dir the way npm
// lays it out (the launcher linked from node_modules/.bin, the platform
// package hoisted next to it) and returns the .bin link and the native
// executable's path.
func npmLayout(t *testing.T, dir, version, platformVersion string) (link, native string) {
	t.Helper()
	target, ok := nativeTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		t.Skipf("no Codex platform package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	write := func(p, s string, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), mode))
	}
	nm := filepath.Join(dir, "node_modules")
	root := filepath.Join(nm, "@openai", "codex")
	write(filepath.Join(root, "package.json"), `{"name":"@openai/codex","version":"`+version+`"}`, 0o644)
	write(filepath.Join(root, "bin", "codex.js"), "#!/usr/bin/env node\n", 0o755)
	vendor := filepath.Join(nm, "@openai", target.pkg, "vendor", target.triple)
	write(filepath.Join(vendor, "codex-package.json"),
		`{"version":"`+platformVersion+`","target":"`+target.triple+`","entrypoint":"bin/codex"}`, 0o644)
	native = filepath.Join(vendor, "bin", "codex")
	write(native, "#!/bin/sh\n", 0o755)
	link = filepath.Join(nm, ".bin", "codex")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink("../@openai/codex/bin/codex.js", link))
	return link, native
}

func TestNativeBin(t *testing.T) {
	// each case changes a good npm layout (nil: as it is) and names the
	// bin it passes; native says whether the native executable is expected
	for _, tc := range []struct {
		name     string
		platform string // the platform package's version
		change   func(t *testing.T, dir, link, native string) (bin string)
		native   bool
	}{
		{"the launcher from node_modules/.bin", "0.169.0", nil, true},
		{"the launcher by name on PATH", "0.169.0", func(t *testing.T, _, link, _ string) string {
			t.Setenv("PATH", filepath.Dir(link))
			return "codex"
		}, true},
		{"a platform package of another version", "0.168.0", nil, false},
		{"no platform package", "0.169.0", func(t *testing.T, _, link, native string) string {
			require.NoError(t, os.RemoveAll(filepath.Dir(filepath.Dir(native))))
			return link
		}, false},
		{"a native file that is not executable", "0.169.0", func(t *testing.T, _, link, native string) string {
			require.NoError(t, os.Chmod(native, 0o644))
			return link
		}, false},
		{"another package's codex.js", "0.169.0", func(t *testing.T, dir, link, _ string) string {
			pj := filepath.Join(dir, "node_modules", "@openai", "codex", "package.json")
			require.NoError(t, os.WriteFile(pj, []byte(`{"name":"codex-lookalike","version":"0.169.0"}`), 0o644))
			return link
		}, false},
		{"a native binary or wrapper already", "0.169.0", func(t *testing.T, dir, _, _ string) string {
			p := filepath.Join(dir, "codex")
			require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
			return p
		}, false},
		{"nothing there", "0.169.0", func(_ *testing.T, dir, _, _ string) string {
			return filepath.Join(dir, "missing", "codex")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			link, native := npmLayout(t, dir, "0.169.0", tc.platform)
			bin := link
			if tc.change != nil {
				bin = tc.change(t, dir, link, native)
			}
			want := bin
			if tc.native {
				want = native
			}
			assert.Equal(t, want, NativeBin(bin))
		})
	}
}

// TestNativeBinInstalled: the Codex the tests run (CODEX_BIN, else the
// pinned one `make codex` installs), when it is the npm launcher, resolves
// to its platform executable, so a Codex upgrade that moves it is noticed.
func TestNativeBinInstalled(t *testing.T) {
	bin := claudetest.Codex.Binary(t)
	got := NativeBin(bin)
	launcher, err := filepath.EvalSymlinks(bin)
	require.NoError(t, err)
	if filepath.Base(launcher) != "codex.js" {
		assert.Equal(t, bin, got, "not the launcher: started as it is")
		return
	}
	assert.NotEqual(t, bin, got, "the launcher resolves to the native executable")
	assert.Equal(t, "codex", filepath.Base(got))
	assert.FileExists(t, filepath.Join(filepath.Dir(filepath.Dir(got)), "codex-package.json"))
}
