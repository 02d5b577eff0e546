//go:build releasesnapshot

// This test reads what `make release-snapshot` just built in dist/; the
// target runs it (go test -tags releasesnapshot) right after GoReleaser.

package release

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnapshotRelease: dist/ holds exactly the assets .goreleaser.yaml
// names, checksums.txt lists each with its real SHA-256, and
// install-binary.sh, served that release by a local server, installs the
// runner and the dispatcher for this machine, which then run and report the
// snapshot's version.
func TestSnapshotRelease(t *testing.T) {
	dist := os.Getenv("MR_RELEASE_DIST")
	require.NotEmpty(t, dist, "MR_RELEASE_DIST must name GoReleaser's dist/ (make release-snapshot sets it)")
	root := filepath.Dir(dist) // artifacts.json paths are relative to the repository root

	want := releaseAssets(t)
	sums := map[string]string{}
	f, err := os.Open(filepath.Join(dist, "checksums.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		require.Len(t, fields, 2, "checksums.txt line %q", sc.Text())
		sums[fields[1]] = fields[0]
	}
	require.NoError(t, sc.Err())
	for name := range want {
		assert.Contains(t, sums, name, "checksums.txt lacks %s", name)
	}
	for name := range sums {
		assert.Contains(t, want, name, "checksums.txt lists %s, which .goreleaser.yaml does not name", name)
	}

	raw, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	require.NoError(t, err)
	var artifacts []struct{ Name, Path string }
	require.NoError(t, json.Unmarshal(raw, &artifacts))
	files := map[string]string{} // asset name → the file GoReleaser uploads under it
	for _, a := range artifacts {
		if _, ok := sums[a.Name]; ok {
			files[a.Name] = filepath.Join(root, a.Path)
		}
	}
	srv := &releaseServer{files: map[string]string{}, codes: map[string]int{}}
	const tag = "v0.0.1"
	for name, s := range sums {
		p, ok := files[name]
		if !assert.True(t, ok, "artifacts.json has no file for %s", name) {
			continue
		}
		body, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, s, sum(string(body)), "checksums.txt's SHA-256 of %s", name)
		srv.files["/"+tag+"/"+name] = string(body)
	}
	cs, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	require.NoError(t, err)
	srv.files["/"+tag+"/checksums.txt"] = string(cs)
	hs := httptest.NewServer(srv)
	defer hs.Close()

	meta, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	require.NoError(t, err)
	var m struct{ Version string }
	require.NoError(t, json.Unmarshal(meta, &m))
	require.NotEmpty(t, m.Version)

	for _, bin := range []string{"runner", "dispatcher"} {
		if _, ok := want[fmt.Sprintf("%s_%s_%s", bin, runtime.GOOS, runtime.GOARCH)]; !ok {
			continue // no release binary for this machine (the installer test covers that path)
		}
		dest := filepath.Join(t.TempDir(), bin)
		code, out := install(t, hs.URL, bin, tag, dest)
		require.Equal(t, 0, code, out)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := exec.CommandContext(ctx, dest, "--version").CombinedOutput()
		cancel()
		require.NoError(t, err, string(got))
		assert.Equal(t, bin+" "+m.Version+"\n", string(got))
	}
}
