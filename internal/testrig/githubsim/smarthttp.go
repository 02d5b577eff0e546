package githubsim

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// isGitPath reports whether p is a smart HTTP path: /{owner}/{name}.git[/...].
func isGitPath(p string) bool {
	segs := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	return len(segs) >= 2 && strings.HasSuffix(segs[1], ".git") && len(segs[1]) > 4
}

// gitCredentials takes the token from Basic auth (password, or the username
// when the password is empty) or from a token/Bearer header.
func gitCredentials(r *http.Request) (string, bool) {
	if user, pass, ok := r.BasicAuth(); ok {
		if pass == "" {
			pass = user
		}
		return pass, pass != ""
	}
	return bearer(r.Header.Get("Authorization"))
}

func askForAuth(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
	http.Error(w, "Authentication required", http.StatusUnauthorized)
}

// serveGit serves clone, fetch and push through git http-backend. Reads of
// private repositories and every push need a token (Basic auth, any user
// name, the token as password); pushes need write permission.
func (s *Sim) serveGit(w http.ResponseWriter, r *http.Request, entry *LoggedRequest) {
	segs := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	owner, name := segs[0], strings.TrimSuffix(segs[1], ".git")
	rest := ""
	if len(segs) == 3 {
		rest = segs[2]
	}
	push := rest == "git-receive-pack" || r.URL.Query().Get("service") == "git-receive-pack"

	tok, hasTok := gitCredentials(r)
	s.mu.Lock()
	login := ""
	if hasTok {
		entry.Token = tok
		if ti := s.tokens[tok]; ti != nil {
			login = ti.login
		}
	}
	repo := s.repos[lower(owner+"/"+name)]
	perm := "none"
	var canon string
	if repo != nil {
		perm = s.permissionLocked(repo, login)
		canon = "/" + repo.meta.Owner + "/" + repo.meta.Name + ".git"
	}
	s.mu.Unlock()
	entry.Login = login

	switch {
	case hasTok && login == "":
		askForAuth(w) // bad credentials
		return
	case repo == nil || !atLeast(perm, "read"):
		if login == "" {
			askForAuth(w)
			return
		}
		http.Error(w, "Repository not found.", http.StatusNotFound)
		return
	case push && !atLeast(perm, "write"):
		if login == "" {
			askForAuth(w)
			return
		}
		http.Error(w, "Permission to "+owner+"/"+name+".git denied to "+login+".", http.StatusForbidden)
		return
	}

	if push && r.Method == http.MethodPost && !s.takeWrite(w, login) {
		return // a push is a content write of its account, as GitHub counts
	}

	// git serves from disk: write what only memory holds, and hold the
	// disk during a push so its ref changes can be read back exactly.
	g := repo.git
	g.diskMu.Lock()
	if err := g.sync(); err != nil {
		g.diskMu.Unlock()
		s.logf("githubsim: %v", err)
		http.Error(w, "githubsim: "+err.Error(), http.StatusInternalServerError)
		return
	}
	pushing := push && r.Method == http.MethodPost
	if !pushing {
		g.diskMu.Unlock()
	}
	if v2UploadPackPost(r, rest) && g.serveLsRefs(w, r) {
		return
	}

	r2 := r.Clone(r.Context())
	r2.URL.Path = canon
	if rest != "" {
		r2.URL.Path += "/" + rest
	}
	env := append([]string{
		"GIT_PROJECT_ROOT=" + s.gitDir,
		"GIT_HTTP_EXPORT_ALL=1",
		"REMOTE_USER=" + login,
	}, s.gitEnv...)
	h := &cgi.Handler{Path: s.gitBin, Args: []string{"http-backend"}, Root: "/", Env: env, Logger: nil}
	if key, ok := s.v2AdvertKey(r, rest); ok {
		v2Adverts.serve(w, key, func(rec *httptest.ResponseRecorder) { h.ServeHTTP(rec, r2) })
		return
	}
	serve := h.ServeHTTP
	if svc, infoRefs, ok := directService(r, rest); ok && !s.viaHTTPBackend.Load() {
		serve = func(w http.ResponseWriter, r *http.Request) { s.serveService(w, r, g.path, svc, infoRefs, login) }
	}
	if !pushing {
		serve(w, r2)
		return
	}
	// A push's answer (a short status report) is held until its ref changes
	// are in memory, so a client never reads a ref older than its push.
	rec := httptest.NewRecorder()
	serve(rec, r2)
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	err := g.readBack(ctx)
	cancel()
	g.diskMu.Unlock()
	if err != nil {
		s.logf("githubsim: read refs after push to %s: %v", canon, err)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// v2AdvertKey says whether r asks for upload-pack's protocol v2 capability
// advertisement (GET info/refs?service=git-upload-pack with Git-Protocol
// version=2), and under which key its answer is cached. In v2 that answer
// lists no refs: it is the same bytes for every repository of every
// simulator with the same git binary and configuration (SHA-1
// repositories), so git http-backend runs once per test process for it
// instead of once per fetch. The key holds the binary, the Git-Protocol
// header and the git environment but the per-simulator HOME (the global
// configuration is /dev/null). Protocol v0/v1 advertisements list refs and
// pushes' receive-pack lists refs in every version: those still go to git
// every time.
func (s *Sim) v2AdvertKey(r *http.Request, rest string) (string, bool) {
	proto := r.Header.Get("Git-Protocol")
	if r.Method != http.MethodGet || rest != "info/refs" || r.URL.Query().Get("service") != "git-upload-pack" ||
		!slices.Contains(strings.Split(proto, ":"), "version=2") {
		return "", false
	}
	key := []string{s.gitBin, proto}
	for _, e := range s.gitEnv {
		if !strings.HasPrefix(e, "HOME=") {
			key = append(key, e)
		}
	}
	return strings.Join(key, "\x00"), true
}

// v2Adverts is shared by every simulator of the process (see v2AdvertKey).
var v2Adverts advertCache

// advertCache holds git's own answers to v2 info/refs requests, by
// Git-Protocol header: status, headers and body exactly as git gave them.
type advertCache struct {
	mu      sync.Mutex
	answers map[string]*httptest.ResponseRecorder
}

// serve writes the cached answer for key, asking git (fill) the first time;
// only a 200 answer is kept.
func (c *advertCache) serve(w http.ResponseWriter, key string, fill func(*httptest.ResponseRecorder)) {
	c.mu.Lock()
	rec := c.answers[key]
	c.mu.Unlock()
	if rec == nil {
		rec = httptest.NewRecorder()
		fill(rec)
		if rec.Code == http.StatusOK {
			c.mu.Lock()
			if c.answers == nil {
				c.answers = map[string]*httptest.ResponseRecorder{}
			}
			c.answers[key] = rec
			c.mu.Unlock()
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = slices.Clone(v)
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// directService says whether r is a smart HTTP request the simulator gives
// straight to git upload-pack or receive-pack, as git http-backend would
// (one process instead of three: git, git-http-backend and the service):
// an info/refs advertisement (GET) or a stateless-rpc call (POST) with the
// content type http-backend accepts and a body it can read (plain or
// gzip). Anything else (a wrong content type, another encoding, dumb HTTP)
// still goes to http-backend, so its answers stay git's own.
func directService(r *http.Request, rest string) (svc string, infoRefs, ok bool) {
	switch {
	case rest == "info/refs" && r.Method == http.MethodGet:
		svc = r.URL.Query().Get("service")
		return strings.TrimPrefix(svc, "git-"), true, svc == "git-upload-pack" || svc == "git-receive-pack"
	case (rest == "git-upload-pack" || rest == "git-receive-pack") && r.Method == http.MethodPost:
		svc = strings.TrimPrefix(rest, "git-")
		enc := r.Header.Get("Content-Encoding")
		return svc, false, r.Header.Get("Content-Type") == "application/x-git-"+svc+"-request" &&
			(enc == "" || enc == "gzip" || enc == "x-gzip")
	}
	return "", false, false
}

// serveService answers r as git http-backend does for svc (upload-pack or
// receive-pack) in the bare repository dir: the same headers, the same
// environment for the service (GIT_PROTOCOL from the Git-Protocol header,
// the committer http-backend names after REMOTE_USER and REMOTE_ADDR), the
// "# service=" preamble before a pre-v2 advertisement, a gzip body
// inflated. The access checks have run already (serveGit).
func (s *Sim) serveService(w http.ResponseWriter, r *http.Request, dir, svc string, infoRefs bool, login string) {
	s.directServed.Add(1)
	h := w.Header()
	h.Set("Expires", "Fri, 01 Jan 1980 00:00:00 GMT")
	h.Set("Pragma", "no-cache")
	h.Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
	user := login
	if user == "" {
		user = "anonymous"
	}
	host := r.RemoteAddr
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = ip
	}
	if host == "" {
		host = "(none)"
	}
	env := append(slices.Clone(s.gitEnv), "GIT_DIR=.", "GIT_COMMITTER_NAME="+user, "GIT_COMMITTER_EMAIL="+user+"@http."+host)
	proto := strings.Join(r.Header.Values("Git-Protocol"), ", ")
	if proto != "" {
		env = append(env, "GIT_PROTOCOL="+proto)
	}
	var stdin io.Reader
	args := []string{svc, "--stateless-rpc", "."}
	if infoRefs {
		args[1] = "--http-backend-info-refs"
		h.Set("Content-Type", "application/x-git-"+svc+"-advertisement")
		w.WriteHeader(http.StatusOK)
		if !slices.Contains(strings.Split(proto, ":"), "version=2") {
			line := "# service=git-" + svc + "\n"
			_, _ = fmt.Fprintf(w, "%04x%s0000", len(line)+4, line)
		}
	} else {
		h.Set("Content-Type", "application/x-git-"+svc+"-result")
		w.WriteHeader(http.StatusOK)
		stdin = r.Body
		if enc := r.Header.Get("Content-Encoding"); enc == "gzip" || enc == "x-gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				s.logf("githubsim: %s: inflate the request: %v", svc, err)
				return
			}
			defer zr.Close()
			stdin = zr
		}
	}
	// not the request's context: like http-backend under net/http/cgi, a
	// push runs to its end even when its client is gone
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.gitBin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout = dir, env, stdin, w
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil || errb.Len() > 0 {
		s.logf("githubsim: git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(errb.String()))
	}
}
