package githubsim

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmartHTTPDirectAsHTTPBackend: the smart HTTP requests the simulator
// hands straight to upload-pack / receive-pack (advertisements in protocol
// v0, v1 and for a push; a v2 fetch, plain and gzipped; a push) get git
// http-backend's answer byte for byte (status, headers, body), and a push
// answered directly lands its refs in memory like one through http-backend.
// What it does not take (a wrong content type) still reaches http-backend.
func TestSmartHTTPDirectAsHTTPBackend(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	tmp := t.TempDir()

	// A real clone, commit and push (answered directly) to capture the
	// requests git sends.
	w.sim.ResetRequests()
	out, err := gitCmd(t, tmp, "clone", "--quiet", authURL(w.base, "tok-bot", "alice/app"), "work")
	require.NoError(t, err, out)
	work := filepath.Join(tmp, "work")
	require.NoError(t, os.WriteFile(filepath.Join(work, "f.txt"), []byte("f\n"), 0o644))
	for _, args := range [][]string{{"add", "f.txt"}, {"commit", "-q", "-m", "f"}, {"push", "-q", "origin", "HEAD:refs/heads/pushed-a"}} {
		out, err := gitCmd(t, work, args...)
		require.NoError(t, err, out)
	}
	head, err := gitCmd(t, work, "rev-parse", "HEAD")
	require.NoError(t, err, head)
	head = strings.TrimSpace(head)
	assert.Equal(t, []string{"refs/heads/pushed-a"}, w.sim.Refs("alice/app", "refs/heads/pushed-"))
	var fetchBody, pushBody []byte
	for _, r := range w.sim.Requests() {
		switch {
		case strings.HasSuffix(r.Path, "/git-upload-pack") && bytes.Contains(r.ReqBody, []byte("command=fetch")):
			fetchBody = r.ReqBody
		case strings.HasSuffix(r.Path, "/git-receive-pack"):
			pushBody = r.ReqBody
		}
	}
	require.NotEmpty(t, fetchBody, "the clone's fetch request")
	require.Contains(t, string(pushBody), "refs/heads/pushed-a", "the push request")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(fetchBody)
	require.NoError(t, err)
	require.NoError(t, zw.Close())

	type answer struct {
		status int
		header http.Header
		body   string
	}
	ask := func(viaBackend bool, method, path string, hdr map[string]string, body []byte) answer {
		t.Helper()
		w.sim.viaHTTPBackend.Store(viaBackend)
		defer w.sim.viaHTTPBackend.Store(false)
		req, err := http.NewRequestWithContext(ctx, method, w.base+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.SetBasicAuth("x-access-token", "tok-bot")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		h := resp.Header.Clone()
		for _, k := range []string{"Date", "X-Github-Request-Id", "Content-Length"} {
			h.Del(k) // the simulator's clock and request id; framing
		}
		return answer{resp.StatusCode, h, joinPackData(t, b)}
	}
	uploadReq := "application/x-git-upload-pack-request"
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		body               []byte
		status             int
		contains           string
		direct             bool
	}{
		{"v0 upload-pack advertisement", "GET", "alice/app.git/info/refs?service=git-upload-pack", nil, nil, 200, "# service=git-upload-pack\n", true},
		{"v1 upload-pack advertisement", "GET", "alice/app.git/info/refs?service=git-upload-pack", map[string]string{"Git-Protocol": "version=1"}, nil, 200, "version 1", true},
		{"receive-pack advertisement", "GET", "alice/app.git/info/refs?service=git-receive-pack", nil, nil, 200, "report-status", true},
		{"v2 fetch", "POST", "alice/app.git/git-upload-pack", map[string]string{"Content-Type": uploadReq, "Git-Protocol": "version=2"}, fetchBody, 200, "packfile", true},
		{"v2 fetch, gzip", "POST", "alice/app.git/git-upload-pack", map[string]string{"Content-Type": uploadReq, "Git-Protocol": "version=2", "Content-Encoding": "gzip"}, gz.Bytes(), 200, "packfile", true},
		{"wrong content type", "POST", "alice/app.git/git-upload-pack", map[string]string{"Content-Type": "text/plain", "Git-Protocol": "version=2"}, fetchBody, http.StatusUnsupportedMediaType, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := w.sim.directServed.Load()
			got := ask(false, c.method, c.path, c.hdr, c.body)
			assert.Equal(t, c.direct, w.sim.directServed.Load() == n+1, "answered without http-backend")
			n = w.sim.directServed.Load()
			want := ask(true, c.method, c.path, c.hdr, c.body)
			assert.Equal(t, n, w.sim.directServed.Load(), "forced through http-backend")
			assert.Equal(t, want, got)
			assert.Equal(t, c.status, got.status)
			assert.Contains(t, got.body, c.contains)
		})
	}

	// The same push again under two new names (a same-length name keeps
	// the pkt-line valid): directly and through http-backend.
	push := func(viaBackend bool, name string) answer {
		body := bytes.Replace(pushBody, []byte("refs/heads/pushed-a"), []byte("refs/heads/"+name), 1)
		a := ask(viaBackend, "POST", "alice/app.git/git-receive-pack", map[string]string{"Content-Type": "application/x-git-receive-pack-request"}, body)
		a.body = strings.ReplaceAll(a.body, name, "NAME")
		return a
	}
	n := w.sim.directServed.Load()
	got := push(false, "pushed-b")
	assert.Equal(t, n+1, w.sim.directServed.Load(), "push answered without http-backend")
	want := push(true, "pushed-c")
	assert.Equal(t, want, got)
	assert.Equal(t, http.StatusOK, got.status)
	assert.Contains(t, got.body, "ok refs/heads/NAME")
	assert.Equal(t, []string{"refs/heads/pushed-a", "refs/heads/pushed-b", "refs/heads/pushed-c"}, w.sim.Refs("alice/app", "refs/heads/pushed-"))
	w.sim.mu.Lock()
	app := w.sim.repos["alice/app"].git
	w.sim.mu.Unlock()
	for _, ref := range []string{"refs/heads/pushed-a", "refs/heads/pushed-b", "refs/heads/pushed-c"} {
		assert.Equal(t, head, app.ref(ref), ref)
	}
}

// joinPackData returns a smart HTTP answer with the data of consecutive
// side-band pack packets (band 1) joined into one: how upload-pack cuts the
// pack into packets depends on how pack-objects' output reached it (two
// runs of git itself cut it differently); the bytes and all other packets
// are compared as they are. A body that is not pkt-lines is kept whole.
func joinPackData(t *testing.T, b []byte) string {
	t.Helper()
	var out []string
	pack := -1 // index in out of the band-1 data being joined
	for rest := b; len(rest) > 0; {
		n, err := strconv.ParseUint(string(rest[:min(4, len(rest))]), 16, 16)
		if err != nil || len(rest) < 4 || (n > 2 && (n < 4 || int(n) > len(rest))) {
			return string(b)
		}
		if n <= 2 {
			out, rest, pack = append(out, string(rest[:4])), rest[4:], -1
			continue
		}
		data := rest[4:n]
		rest = rest[n:]
		if len(data) > 0 && data[0] == 1 && pack >= 0 {
			out[pack] += string(data[1:])
			continue
		}
		pack = -1
		if len(data) > 0 && data[0] == 1 {
			pack = len(out)
			out = append(out, "<band 1>"+string(data[1:]))
			continue
		}
		out = append(out, string(data))
	}
	return strings.Join(out, "\n--\n")
}
