package release

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const goreleaserConfig = "../../../.goreleaser.yaml"

// goreleaser is the part of .goreleaser.yaml that decides the names of
// the release assets.
type goreleaser struct {
	Builds []struct {
		ID     string           `yaml:"id"`
		Binary string           `yaml:"binary"`
		Goos   []string         `yaml:"goos"`
		Goarch []string         `yaml:"goarch"`
		Ignore []map[string]any `yaml:"ignore"`
	} `yaml:"builds"`
	Archives []struct {
		Formats      []string `yaml:"formats"`
		NameTemplate string   `yaml:"name_template"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
	} `yaml:"checksum"`
}

// assetNameTemplate is the only archive name the installer understands:
// NAME_OS_ARCH, which GoReleaser gives a .exe on Windows.
const assetNameTemplate = "{{ .Binary }}_{{ .Os }}_{{ .Arch }}"

// releaseAssets reads .goreleaser.yaml and returns the file names a
// release publishes besides checksums.txt, each with its binary, GOOS and
// GOARCH. It fails the test on any configuration the installer does not
// follow (archives instead of bare binaries, another name, ignored targets).
func releaseAssets(t *testing.T) map[string][3]string {
	t.Helper()
	raw, err := os.ReadFile(goreleaserConfig)
	require.NoError(t, err)
	var cfg goreleaser
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	require.Equal(t, "checksums.txt", cfg.Checksum.NameTemplate, "install-binary.sh downloads checksums.txt")
	require.Len(t, cfg.Archives, 1, "one archive entry: bare binaries")
	require.Equal(t, []string{"binary"}, cfg.Archives[0].Formats, "install-binary.sh downloads bare binaries, not archives")
	require.Equal(t, assetNameTemplate, cfg.Archives[0].NameTemplate, "install-binary.sh asks for NAME_OS_ARCH")
	require.NotEmpty(t, cfg.Builds)
	assets := map[string][3]string{}
	for _, b := range cfg.Builds {
		require.Empty(t, b.Ignore, "build %s: an ignore list would drop assets the names below promise", b.ID)
		for _, goos := range b.Goos {
			for _, goarch := range b.Goarch {
				name := b.Binary + "_" + goos + "_" + goarch
				if goos == "windows" {
					name += ".exe"
				}
				assets[name] = [3]string{b.Binary, goos, goarch}
			}
		}
	}
	return assets
}

// installerCalls finds which binary each workflow or action installs with
// scripts/install-binary.sh.
func installerCalls(t *testing.T) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`install-binary\.sh"?\s+([a-z]+)\s`)
	calls := map[string]string{}
	for _, f := range []string{"../../../action.yml", "../../../.github/workflows/dispatcher.yml"} {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		m := re.FindAllStringSubmatch(string(raw), -1)
		require.Len(t, m, 1, "%s runs install-binary.sh once", f)
		calls[filepath.Base(f)] = m[0][1]
	}
	return calls
}

// TestReleaseAssetNamesMatchInstaller: the names .goreleaser.yaml gives
// the release assets are the names scripts/install-binary.sh asks for on
// every machine it knows (uname faked through PATH), the binaries the
// action and the dispatcher workflow install are built for the hosted
// runners, and a machine without a release binary builds from source.
func TestReleaseAssetNamesMatchInstaller(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the install script runs on Linux and macOS runners")
	}
	assets := releaseAssets(t)
	built := map[string]bool{}
	for _, a := range assets {
		built[a[0]] = true
	}
	for file, bin := range installerCalls(t) {
		assert.True(t, built[bin], "%s installs %q, which .goreleaser.yaml does not build", file, bin)
		assert.Contains(t, assets, bin+"_linux_amd64", "%s runs on ubuntu-latest: %s needs a linux/amd64 release binary", file, bin)
	}

	// One release holding every asset, each with its own content.
	srv := &releaseServer{files: map[string]string{}, codes: map[string]int{}}
	var sums strings.Builder
	names := make([]string, 0, len(assets))
	for name := range assets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		body := "#!/bin/sh\necho " + name + "\n"
		srv.files["/v1.2.3/"+name] = body
		fmt.Fprintf(&sums, "%s  %s\n", sum(body), name)
	}
	srv.files["/v1.2.3/checksums.txt"] = sums.String()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	// Every machine's asset name comes from one shell that sources the
	// script (asset_name, uname faked as a function); the whole script then
	// installs, uname faked through PATH, on one spelling of each OS and
	// architecture (the other spellings name the same asset, checked here).
	unameOS := map[string]string{"Linux": "linux", "Darwin": "darwin"}
	unameArch := map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
	installOn := map[string]bool{"x86_64": true, "aarch64": true}
	bins := make([]string, 0, len(built))
	for bin := range built {
		bins = append(bins, bin)
	}
	sort.Strings(bins)
	type machine struct{ bin, sysName, arch string }
	var machines []machine
	for _, bin := range bins {
		for sysName := range unameOS {
			for arch := range unameArch {
				machines = append(machines, machine{bin, sysName, arch})
			}
		}
	}
	unknown := []machine{{"runner", "FreeBSD", "x86_64"}, {"runner", "Linux", "riscv64"}, {"dispatcher", "Darwin", "ppc64"}}
	named := assetNames(t, append(append([]machine(nil), machines...), unknown...), func(m machine) [3]string { return [3]string{m.bin, m.sysName, m.arch} })
	for i, m := range unknown {
		got := named[len(machines)+i]
		unknownPart := m.arch
		if _, ok := unameOS[m.sysName]; !ok {
			unknownPart = m.sysName
		}
		assert.Equal(t, [2]string{"3", "no release binary for " + unknownPart + ": build from source"}, got, "%v", m)
	}
	installed := map[string]bool{}
	for i, m := range machines {
		bin, sysName, machine := m.bin, m.sysName, m.arch
		goos, goarch := unameOS[sysName], unameArch[machine]
		want := bin + "_" + goos + "_" + goarch
		assert.Equal(t, [2]string{"0", want}, named[i], "asset_name on %s %s", sysName, machine)
		if !installOn[machine] || testing.Short() && (sysName != "Linux" || machine != "x86_64") {
			continue // -short: one machine per binary; make test installs on each OS and architecture
		}
		t.Run(bin+"/"+sysName+"/"+machine, func(t *testing.T) {
			shim := t.TempDir()
			fake := "#!/bin/sh\ncase \"$1\" in -s) echo " + sysName + " ;; -m) echo " + machine + " ;; *) exit 1 ;; esac\n"
			require.NoError(t, os.WriteFile(filepath.Join(shim, "uname"), []byte(fake), 0o755))
			dest := filepath.Join(t.TempDir(), bin)
			code, out := install(t, hs.URL, bin, "v1.2.3", dest, "PATH="+shim+":"+os.Getenv("PATH"))
			if _, ok := assets[want]; !ok {
				assert.Equal(t, 3, code, "no %s in the release: build from source\n%s", want, out)
				assert.Contains(t, out, "has no "+want+": build from source")
				return
			}
			require.Equal(t, 0, code, out)
			got, err := os.ReadFile(dest)
			require.NoError(t, err)
			assert.Equal(t, srv.files["/v1.2.3/"+want], string(got), "installed the asset named %s", want)
			srv.mu.Lock()
			installed[want] = true
			srv.mu.Unlock()
		})
	}
	for _, name := range names {
		if a := assets[name]; a[1] != "windows" && !testing.Short() {
			assert.True(t, installed[name], "no machine install-binary.sh knows downloads %s", name)
		}
	}
}

// TestMakefileChecksTheReleaseAssets: make release-snapshot checks dist/
// against the same list (internal/testrig/release's snapshot test reads it from
// .goreleaser.yaml too), so the Makefile names no assets of its own.
func TestMakefileChecksTheReleaseAssets(t *testing.T) {
	raw, err := os.ReadFile("../../../Makefile")
	require.NoError(t, err)
	mk := string(raw)
	assert.Regexp(t, `(?m)^release-snapshot:`, mk)
	assert.Contains(t, mk, "-tags releasesnapshot", "release-snapshot runs the snapshot install test")
	for name := range releaseAssets(t) {
		assert.NotContains(t, mk, name, "the Makefile must not keep its own list of asset names")
	}
}

// assetNames sources install-binary.sh in one bash and runs its asset_name
// for each machine (binary, uname -s, uname -m), uname faked as a shell
// function; it returns each call's exit status and output, in order.
func assetNames[M any](t *testing.T, machines []M, fields func(M) [3]string) [][2]string {
	t.Helper()
	var sh strings.Builder
	sh.WriteString("source " + script + "\n")
	for _, m := range machines {
		f := fields(m)
		for _, v := range f {
			require.Regexp(t, `^[A-Za-z0-9_]+$`, v, "no quoting needed")
		}
		fmt.Fprintf(&sh, "uname() { case \"$1\" in -s) echo %s ;; -m) echo %s ;; *) return 1 ;; esac; }\n", f[1], f[2])
		fmt.Fprintf(&sh, "out=$(asset_name %s) && rc=0 || rc=$?; printf '%%s\\t%%s\\n' \"$rc\" \"$out\"\n", f[0])
	}
	out, err := exec.Command("bash", "-c", sh.String()).CombinedOutput()
	require.NoError(t, err, string(out))
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(machines), string(out))
	res := make([][2]string, len(lines))
	for i, l := range lines {
		rc, o, ok := strings.Cut(l, "\t")
		require.True(t, ok, l)
		res[i] = [2]string{rc, o}
	}
	return res
}
