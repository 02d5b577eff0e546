package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const script = "../../../scripts/install-binary.sh"

// releaseServer serves files under /<tag>/<name> and logs what was asked.
type releaseServer struct {
	mu    sync.Mutex
	files map[string]string // "/v1.2.3/checksums.txt" → body
	codes map[string]int    // forced status per path
	seen  []string
}

func (s *releaseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, r.URL.Path)
	if c, ok := s.codes[r.URL.Path]; ok {
		w.WriteHeader(c)
		return
	}
	body, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write([]byte(body))
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// install runs the script and returns its exit code and output; env is
// added to this process's environment.
func install(t *testing.T, base, name, ref, dest string, env ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, name, ref, dest)
	cmd.Env = append(append(os.Environ(), "MR_RELEASE_BASE_URL="+base), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err, string(out))
	return 0, string(out)
}

func TestInstallBinary(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the install script runs on Linux and macOS runners")
	}
	asset := fmt.Sprintf("runner_%s_%s", runtime.GOOS, runtime.GOARCH)
	const bin = "#!/bin/sh\necho the runner\n"
	good := func(s *releaseServer) {
		s.files["/v1.2.3/checksums.txt"] = sum("other") + "  dispatcher_windows_amd64.exe\n" + sum(bin) + "  " + asset + "\n"
		s.files["/v1.2.3/"+asset] = bin
	}
	cases := []struct {
		name    string
		ref     string
		setup   func(*releaseServer)
		code    int
		output  string
		asked   []string // paths requested, in order
		install bool
	}{
		{"verified release binary", "v1.2.3", good, 0, "installed " + asset + " of mention-runner v1.2.3 (sha256 " + sum(bin) + ")",
			[]string{"/v1.2.3/checksums.txt", "/v1.2.3/" + asset}, true},
		{"checksum mismatch", "v1.2.3", func(s *releaseServer) { good(s); s.files["/v1.2.3/"+asset] = bin + "tampered" }, 1,
			"checksum mismatch for " + asset + " of v1.2.3: checksums.txt says " + sum(bin), nil, false},
		{"no such release", "v9.9.9", good, 3, "mention-runner v9.9.9 has no release: build from source", []string{"/v9.9.9/checksums.txt"}, false},
		{"no build for this machine", "v1.2.3", func(s *releaseServer) {
			good(s)
			s.files["/v1.2.3/checksums.txt"] = sum(bin) + "  runner_plan9_mips\n"
		}, 3, "has no " + asset + ": build from source", []string{"/v1.2.3/checksums.txt"}, false},
		{"a commit is not a release", strings.Repeat("a", 40), good, 3, "is not a release tag (vX.Y.Z)", []string{}, false},
		{"a branch is not a release", "main", good, 3, "is not a release tag", []string{}, false},
		{"checksums refused", "v1.2.3", func(s *releaseServer) { good(s); s.codes["/v1.2.3/checksums.txt"] = http.StatusForbidden }, 1,
			"checksums.txt failed (HTTP 403)", nil, false},
		{"binary missing", "v1.2.3", func(s *releaseServer) { good(s); delete(s.files, "/v1.2.3/"+asset) }, 1,
			"downloading", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &releaseServer{files: map[string]string{}, codes: map[string]int{}}
			tc.setup(s)
			srv := httptest.NewServer(s)
			defer srv.Close()
			dest := filepath.Join(t.TempDir(), "bin", "runner")
			code, out := install(t, srv.URL, "runner", tc.ref, dest)
			assert.Equal(t, tc.code, code, out)
			assert.Contains(t, out, tc.output)
			if tc.asked != nil {
				s.mu.Lock()
				assert.Equal(t, tc.asked, append([]string{}, s.seen...))
				s.mu.Unlock()
			}
			got, err := os.ReadFile(dest)
			if !tc.install {
				assert.True(t, os.IsNotExist(err), "nothing installed at %s", dest)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, bin, string(got))
			fi, err := os.Stat(dest)
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&0o111, "executable")
		})
	}
}

func TestInstallBinaryUsage(t *testing.T) {
	cmd := exec.Command("bash", script, "runner")
	b, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(b), "usage: install-binary.sh NAME REF DEST")
}
