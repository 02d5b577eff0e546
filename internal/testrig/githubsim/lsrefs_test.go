package githubsim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pktCommand encodes a v2 command as a client sends it.
func pktCommand(command string, caps, args []string) []byte {
	var b bytes.Buffer
	line := func(s string) { fmt.Fprintf(&b, "%04x%s\n", len(s)+5, s) }
	line("command=" + command)
	for _, c := range caps {
		line(c)
	}
	b.WriteString("0001")
	for _, a := range args {
		line(a)
	}
	b.WriteString("0000")
	return b.Bytes()
}

// TestSmartHTTPLsRefsAsGit: the ls-refs answers the simulator gives in
// process are byte for byte git upload-pack's for the same repository
// (HEAD, symref-target, peeled annotated tags, unborn HEAD, ref-prefix
// filters, a fork, refs a push brought), with git http-backend's headers,
// behind the same access checks; what it does not answer goes to git.
func TestSmartHTTPLsRefsAsGit(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	tmp := t.TempDir()
	repo := func(name string) *gitStore {
		w.sim.mu.Lock()
		defer w.sim.mu.Unlock()
		return w.sim.repos[lower(name)].git
	}

	app := repo("alice/app")
	main := app.ref("refs/heads/main")
	tag := app.put("tag", []byte("object "+main+"\ntype commit\ntag v1\ntagger t <t@example.invalid> 0 +0000\n\nv1\n"))
	app.setRef("refs/tags/v1", tag)
	app.setRef("refs/tags/v1-outer", app.put("tag", []byte("object "+tag+"\ntype tag\ntag v1-outer\ntagger t <t@example.invalid> 0 +0000\n\nouter\n")))
	app.setRef("refs/tags/light", main)
	app.setRef("refs/heads/feature/a", main)
	app.setRef("refs/pull/1/head", main)

	secret := repo("alice/secret") // unborn HEAD: its default branch is gone
	secretMain := secret.ref("refs/heads/main")
	secret.setRef("refs/heads/other", secretMain)
	require.NoError(t, secret.casRef("refs/heads/main", secretMain, ""))

	_, _, err := w.gh["bot"].Repositories.CreateFork(ctx, "alice", "app", nil)
	var accepted *github.AcceptedError
	if err != nil {
		require.ErrorAs(t, err, &accepted)
	}
	fork := repo("bot/app")
	// a branch pushed to the fork: its commit is on disk only
	out, err := gitCmd(t, tmp, "clone", "--quiet", w.base+"alice/app.git", "work")
	require.NoError(t, err, out)
	work := filepath.Join(tmp, "work")
	require.NoError(t, os.WriteFile(filepath.Join(work, "f.txt"), []byte("f\n"), 0o644))
	for _, args := range [][]string{{"add", "f.txt"}, {"commit", "-q", "-m", "f"}, {"push", "-q", authURL(w.base, "tok-bot", "bot/app"), "HEAD:refs/heads/pushed"}} {
		out, err := gitCmd(t, work, args...)
		require.NoError(t, err, out)
	}

	caps := []string{"agent=git/2.39.5", "object-format=sha1"}
	for _, c := range []struct {
		name, repo, token string
		args              []string
		inProcess         bool
	}{
		{"everything", "alice/app", "", []string{"symrefs", "peel", "unborn"}, true},
		{"no arguments", "alice/app", "", nil, true},
		{"HEAD as ls-remote --symref asks", "alice/app", "", []string{"symrefs", "ref-prefix HEAD"}, true},
		{"a branch as fetch asks", "alice/app", "", []string{"symrefs", "peel", "unborn", "ref-prefix refs/heads/main", "ref-prefix refs/tags/"}, true},
		{"tags without peel", "alice/app", "", []string{"ref-prefix refs/tags/"}, true},
		{"prefixes out of order", "alice/app", "", []string{"peel", "ref-prefix refs/tags/v", "ref-prefix refs/heads/", "ref-prefix refs/tags/"}, true},
		{"nothing matches", "alice/app", "", []string{"ref-prefix refs/nope/"}, true},
		{"unborn HEAD", "alice/secret", "tok-bot", []string{"symrefs", "unborn", "peel"}, true},
		{"unborn HEAD, no unborn", "alice/secret", "tok-bot", []string{"symrefs", "peel"}, true},
		{"unborn HEAD, no symrefs", "alice/secret", "tok-bot", []string{"unborn"}, true},
		{"a fork, a pushed branch", "bot/app", "", []string{"symrefs", "peel", "unborn"}, false},
		{"a fork, its main", "bot/app", "", []string{"symrefs", "peel", "ref-prefix HEAD", "ref-prefix refs/heads/main"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := pktCommand("ls-refs", caps, c.args)
			resp := postUploadPackV2(t, ctx, w.base+c.repo+".git/git-upload-pack", body, c.token)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
			assert.Equal(t, "application/x-git-upload-pack-result", resp.Header.Get("Content-Type"))
			assert.Equal(t, "no-cache, max-age=0, must-revalidate", resp.Header.Get("Cache-Control"))
			assert.Equal(t, "no-cache", resp.Header.Get("Pragma"))
			assert.Equal(t, "Fri, 01 Jan 1980 00:00:00 GMT", resp.Header.Get("Expires"))

			g := repo(c.repo)
			want, err := w.sim.runGit(ctx, g.path, body, []string{"GIT_PROTOCOL=version=2"}, "upload-pack", "--stateless-rpc", ".")
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			parsed, ok := parseLsRefs(body)
			require.True(t, ok)
			_, answered := g.lsRefs(parsed)
			assert.Equal(t, c.inProcess, answered, "answered in process")
		})
	}
	assert.NotNil(t, fork)

	// The same access checks as every git request.
	for _, c := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"tok-mallory", http.StatusNotFound}, {"bad", http.StatusUnauthorized}} {
		resp := postUploadPackV2(t, ctx, w.base+"alice/secret.git/git-upload-pack", pktCommand("ls-refs", caps, nil), c.token)
		resp.Body.Close()
		assert.Equal(t, c.want, resp.StatusCode, c.token)
	}

	// The real client through the simulator: ls-remote --symref and a fetch.
	out, err = gitCmd(t, tmp, "ls-remote", "--symref", w.base+"alice/app.git", "HEAD")
	require.NoError(t, err, out)
	assert.Equal(t, "ref: refs/heads/main\tHEAD\n"+main+"\tHEAD\n", out)
	out, err = gitCmd(t, work, "fetch", "-q", w.base+"alice/app.git", "+refs/tags/v1-outer:refs/tags/v1-outer", "+refs/heads/feature/a:refs/remotes/x/a")
	require.NoError(t, err, out)
	out, err = gitCmd(t, work, "rev-parse", "refs/remotes/x/a", "refs/tags/v1-outer^{commit}")
	require.NoError(t, err, out)
	assert.Equal(t, main+"\n"+main+"\n", out)
}

// TestParseLsRefs: only a well-formed ls-refs command with the arguments
// git knows is answered in process; everything else is left to git.
func TestParseLsRefs(t *testing.T) {
	caps := []string{"agent=git/2.39.5", "object-format=sha1"}
	many := make([]string, maxLsRefsPrefixes+1)
	for i := range many {
		many[i] = fmt.Sprintf("ref-prefix refs/%d/", i)
	}
	for _, c := range []struct {
		name string
		body []byte
		ok   bool
		want lsRefsRequest
	}{
		{"all arguments", pktCommand("ls-refs", caps, []string{"symrefs", "peel", "unborn", "ref-prefix HEAD", "ref-prefix refs/heads/"}), true,
			lsRefsRequest{symrefs: true, peel: true, unborn: true, prefixes: []string{"HEAD", "refs/heads/"}}},
		{"no arguments", pktCommand("ls-refs", caps, nil), true, lsRefsRequest{}},
		{"no newlines", []byte("0013command=ls-refs000fagent=git/x00010000"), true, lsRefsRequest{}},
		{"fetch", pktCommand("fetch", caps, []string{"want " + emptyTree}), false, lsRefsRequest{}},
		{"unknown argument", pktCommand("ls-refs", caps, []string{"frobnicate"}), false, lsRefsRequest{}},
		{"sha256", pktCommand("ls-refs", []string{"object-format=sha256"}, nil), false, lsRefsRequest{}},
		{"server option", pktCommand("ls-refs", []string{"server-option=x"}, nil), false, lsRefsRequest{}},
		{"too many prefixes", pktCommand("ls-refs", caps, many), false, lsRefsRequest{}},
		{"no flush", bytes.TrimSuffix(pktCommand("ls-refs", caps, nil), []byte("0000")), false, lsRefsRequest{}},
		{"after the flush", append(pktCommand("ls-refs", caps, nil), "0000"...), false, lsRefsRequest{}},
		{"no delimiter", []byte("0014command=ls-refs\n0000"), false, lsRefsRequest{}},
		{"short length", []byte("0003"), false, lsRefsRequest{}},
		{"long length", []byte("0fffcommand=ls-refs\n"), false, lsRefsRequest{}},
		{"bad hex", []byte("00zzcommand=ls-refs\n"), false, lsRefsRequest{}},
		{"empty", nil, false, lsRefsRequest{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseLsRefs(c.body)
			assert.Equal(t, c.ok, ok)
			if c.ok {
				assert.Equal(t, c.want, got)
			}
		})
	}
}

func FuzzParseLsRefs(f *testing.F) {
	f.Add(pktCommand("ls-refs", []string{"agent=git/2.39.5", "object-format=sha1"}, []string{"symrefs", "peel", "ref-prefix HEAD"}))
	f.Add([]byte("0000"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ok := parseLsRefs(body)
		if ok {
			assert.LessOrEqual(t, len(req.prefixes), maxLsRefsPrefixes)
			assert.Equal(t, "0000", string(body[len(body)-4:]))
		}
	})
}

// postUploadPackV2 posts one protocol-v2 upload-pack request as git does,
// with the token as basic auth when there is one.
func postUploadPackV2(t *testing.T, ctx context.Context, url string, body []byte, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
	req.Header.Set("Git-Protocol", "version=2")
	if token != "" {
		req.SetBasicAuth("x-access-token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}
