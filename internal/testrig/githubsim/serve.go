package githubsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

const docURL = "https://docs.github.com/rest"

// call is one API request being served.
type call struct {
	s       *Sim
	w       http.ResponseWriter
	r       *http.Request
	token   string
	login   string // "" = anonymous
	rateKey string
	counted bool
	params  map[string]string
	body    []byte
	entry   *LoggedRequest
	base    string
}

// logWriter captures status and a capped copy of the response body.
type logWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	before func() // runs once before the header is written
	answer func() // runs once before the client can see anything
	seen   bool
}

// answering marks the moment the client may start to see the outcome.
func (lw *logWriter) answering() {
	if !lw.seen {
		lw.seen = true
		if lw.answer != nil {
			lw.answer()
		}
	}
}

func (lw *logWriter) WriteHeader(code int) {
	if lw.status != 0 {
		return
	}
	if lw.before != nil {
		lw.before()
	}
	lw.answering()
	lw.status = code
	lw.ResponseWriter.WriteHeader(code)
}

func (lw *logWriter) Write(p []byte) (int, error) {
	if lw.status == 0 {
		lw.WriteHeader(http.StatusOK)
	}
	if room := maxLoggedBody - lw.body.Len(); room > 0 {
		lw.body.Write(p[:min(room, len(p))])
	}
	return lw.ResponseWriter.Write(p)
}

func (lw *logWriter) Flush() {
	if f, ok := lw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (lw *logWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := lw.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("githubsim: connection cannot be hijacked")
	}
	lw.answering() // a reset is an outcome the client sees
	return h.Hijack()
}

// cappedBuffer keeps the first maxLoggedBody bytes written to it.
type cappedBuffer struct{ bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxLoggedBody - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (s *Sim) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.base == "" && r.Host != "" {
		s.base = "http://" + r.Host + "/"
	}
	base := s.baseLocked()
	s.reqSeq++
	reqID := s.reqSeq
	s.moments++
	arrived := s.moments
	s.mu.Unlock()

	entry := &LoggedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, At: s.now(), Start: time.Now(), Arrived: arrived}
	// The entry is logged when the handler ends, which can be after the
	// client has its answer; the log readers wait for every request the
	// client may already have seen (see answering), so a test that resets
	// the log after a call never finds that call logged afterwards.
	lw := &logWriter{ResponseWriter: w, answer: func() { s.startAnswer(reqID) }}
	w.Header().Set("X-GitHub-Request-Id", fmt.Sprintf("SIM:%08d", reqID))
	// GitHub's clock, not the machine's: clients may compare it with the
	// times in answers (the poller's read horizon does).
	w.Header().Set("Date", entry.At.UTC().Format(http.TimeFormat))
	defer func() {
		entry.Status = lw.status
		entry.RespBody = lw.body.Bytes() // lw ends with this request
		entry.seq = reqID
		entry.End = time.Now()
		s.mu.Lock()
		s.moments++
		entry.Ended = s.moments
		// Keep the log in arrival order: a reset request's handler can end
		// after the client has already sent (and been answered on) its next
		// request, so completion order would show them swapped.
		i := len(s.requests)
		for i > 0 && s.requests[i-1].seq > reqID {
			i--
		}
		s.requests = slices.Insert(s.requests, i, *entry)
		// Trim in batches so a full log costs amortised O(1) per request.
		if s.logLimit > 0 && len(s.requests) > s.logLimit+s.logLimit/4 {
			s.requests = append([]LoggedRequest(nil), s.requests[len(s.requests)-s.logLimit:]...)
		}
		if lw.seen {
			delete(s.answering, reqID)
			s.logged.Broadcast()
		}
		s.mu.Unlock()
	}()

	git := isGitPath(r.URL.Path)
	var reqCopy cappedBuffer
	var body []byte
	if git {
		// Pack data can be large: stream it to git, keep a capped copy.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &reqCopy), r.Body}
	} else {
		b, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		if err != nil {
			entry.ReqBody = b
			writeError(lw, http.StatusBadRequest, "Problems reading the request body", nil)
			return
		}
		body = b
	}
	// The log keeps the body read (nothing changes it in place), or the
	// first maxLoggedBody bytes of a larger or streamed one.
	defer func() {
		switch {
		case git:
			entry.ReqBody = reqCopy.Bytes()
		case len(body) <= maxLoggedBody:
			entry.ReqBody = body
		default:
			entry.ReqBody = append([]byte(nil), body[:maxLoggedBody]...)
		}
	}()

	f := s.pickFault(r.Method, r.URL.Path, body)
	if f != nil && !f.AfterApply {
		entry.Fault = f.Label()
		if s.applyFault(lw, r, f) {
			return
		}
	}
	if f == nil || !f.AfterApply {
		s.serveRequest(lw, r, body, entry, base, git)
		return
	}
	// Apply-then-fail: the request is served in full, its answer dropped
	// and replaced by the fault.
	entry.Fault = f.Label()
	sink := &logWriter{ResponseWriter: &sinkWriter{h: http.Header{}}}
	s.serveRequest(sink, r, body, entry, base, git)
	entry.AppliedStatus = sink.status
	if !s.applyFault(lw, r, f) {
		resetConn(lw) // slow after apply: the answer is still lost
	}
}

func (s *Sim) serveRequest(lw *logWriter, r *http.Request, body []byte, entry *LoggedRequest, base string, git bool) {
	if git {
		s.serveGit(lw, r, entry)
		return
	}
	c := &call{s: s, w: lw, r: r, body: body, entry: entry, base: base}
	lw.before = c.setRateHeaders
	s.serveAPI(c)
}

// serveAPI authenticates, applies rate limits and routes a REST request.
func (s *Sim) serveAPI(c *call) {
	h := c.w.Header()
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	tok, ok := bearer(c.r.Header.Get("Authorization"))
	if ok {
		s.mu.Lock()
		ti := s.tokens[tok]
		var scopes []string
		if ti != nil {
			scopes = ti.scopes
		}
		s.mu.Unlock()
		if ti == nil {
			c.entry.Token = tok
			c.err(http.StatusUnauthorized, "Bad credentials", nil)
			return
		}
		c.token, c.login = tok, ti.login
		if scopes != nil {
			h.Set("X-OAuth-Scopes", strings.Join(scopes, ", "))
		}
		c.entry.Token, c.entry.Login = tok, ti.login
		c.rateKey = "user:" + lower(ti.login)
	} else {
		c.rateKey = "anon"
	}

	if !s.takePrimary(c) {
		return
	}
	if isWrite(c.r.Method) && c.r.URL.Path != "/graphql" && !s.takeSecondary(c) {
		return
	}
	if s.redirected(c) {
		return
	}
	h2, params := s.route(c.r.Method, c.r.URL.Path)
	if h2 == nil {
		c.err(http.StatusNotFound, "Not Found", nil)
		return
	}
	c.params = params
	h2(c)
}

// redirected answers a request under an old repository name the way GitHub
// does after a rename or transfer: 301 for reads, 307 for writes (the
// client repeats the write at the new name).
func (s *Sim) redirected(c *call) bool {
	rest, ok := strings.CutPrefix(c.r.URL.Path, "/repos/")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return false
	}
	s.mu.Lock()
	to, moved := s.redirects[lower(parts[0]+"/"+parts[1])]
	s.mu.Unlock()
	if !moved {
		return false
	}
	loc := c.base + "repos/" + to
	if len(parts) == 3 {
		loc += "/" + parts[2]
	}
	if c.r.URL.RawQuery != "" {
		loc += "?" + c.r.URL.RawQuery
	}
	status := http.StatusMovedPermanently
	if c.r.Method != http.MethodGet && c.r.Method != http.MethodHead {
		status = http.StatusTemporaryRedirect
	}
	c.w.Header().Set("Location", loc)
	writeError(c.w, status, "Moved Permanently", nil)
	return true
}

// bearer extracts the token from "token X", "Bearer X" or Basic auth.
func bearer(auth string) (string, bool) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok {
		return "", false
	}
	switch strings.ToLower(scheme) {
	case "token", "bearer":
		t := strings.TrimSpace(rest)
		return t, t != ""
	}
	return "", false
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// --- response helpers -------------------------------------------------------

func (c *call) json(status int, v any) {
	data, err := marshal(v)
	if err != nil {
		c.err(http.StatusInternalServerError, "githubsim: encode response: "+err.Error(), nil)
		return
	}
	c.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	c.w.WriteHeader(status)
	_, _ = c.w.Write(data)
}

func (c *call) noContent(status int) { c.w.WriteHeader(status) }

func (c *call) err(status int, msg string, errs []any) { writeError(c.w, status, msg, errs) }

// invalid answers 422 "Validation Failed" with one error object.
func (c *call) invalid(resource, field, code, msg string) {
	e := map[string]any{"resource": resource, "field": field, "code": code}
	if msg != "" {
		e["message"] = msg
	}
	c.err(http.StatusUnprocessableEntity, "Validation Failed", []any{e})
}

func (c *call) notFound() { c.err(http.StatusNotFound, "Not Found", nil) }

func writeError(w http.ResponseWriter, status int, msg string, errs []any) {
	body := map[string]any{"message": msg, "documentation_url": docURL}
	if errs != nil {
		body["errors"] = errs
	}
	if status == http.StatusUnprocessableEntity && errs == nil {
		body["errors"] = []any{}
	}
	data, _ := marshal(body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// decode parses the JSON request body into v; on failure it answers 400.
func (c *call) decode(v any) bool {
	if len(bytes.TrimSpace(c.body)) == 0 {
		c.body = []byte("{}")
	}
	if err := json.Unmarshal(c.body, v); err != nil {
		c.err(http.StatusBadRequest, "Problems parsing JSON", nil)
		return false
	}
	return true
}

func (c *call) query(name string) string { return c.r.URL.Query().Get(name) }

// timeQuery parses an ISO 8601 query parameter; ok is false after a 422.
func (c *call) timeQuery(name string) (time.Time, bool) {
	v := c.query(name)
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		c.invalid("Query", name, "invalid", name+" must be an ISO 8601 timestamp")
		return time.Time{}, false
	}
	return t, true
}
