package githubsim

import (
	"bytes"
	"crypto/sha256"
	"net/http"
	"path"
	"strings"
	"time"
)

// FaultKind names a way a request can fail.
type FaultKind string

const (
	FaultStatus500      FaultKind = "status_500"
	FaultStatus502      FaultKind = "status_502"
	FaultStatus503      FaultKind = "status_503"
	FaultReset          FaultKind = "reset"           // hijack and close the connection
	FaultHang           FaultKind = "hang"            // block until Delay (0 = forever) or the request ends, then reset
	FaultSlow           FaultKind = "slow"            // wait Delay, then serve normally
	FaultSecondaryLimit FaultKind = "secondary_limit" // 403 secondary rate limit with Retry-After: 60
	FaultHTML           FaultKind = "html"            // an HTML error page (Status, default 502) instead of JSON
	FaultText           FaultKind = "text"            // a plain-text refusal (Status, default 403), as git's HTTP server refuses a push
)

// Fault injects failures into matching requests.
//
// Path is matched against the request path with path.Match ("/repos/*/*/issues/*/comments");
// a pattern ending in "*" also matches any longer path whose leading segments
// match ("/repos/*" matches every repository endpoint). "" matches all paths.
// With OnCall > 0 only the n-th matching call (1-based) fails; otherwise each
// matching call fails with probability Rate, drawn from the seeded PRNG.
//
// With AfterApply the request is handled first (the write is stored) and
// only its answer is replaced by the fault: GitHub's 502, connection reset
// or timeout (FaultHang) after the fact, which a blind retry turns into a
// duplicate. WritesOnly restricts the fault to POST, PATCH, PUT and DELETE.
//
// Mentions, when set, restricts the fault to requests whose path or body
// contains it: one write among several to the same endpoint (the commit
// of one state, the update of one ref), whatever order they come in.
//
// PerRequest, when > 0, fails one request (the same method, path and body:
// a client's retries of it) at most that many times; later attempts pass.
// A Rate drawn afresh for each attempt otherwise fails every retry of one
// request now and then (at Rate 0.15, all 5 attempts once in ~13,000
// requests), which a test of what lost answers do must not depend on.
type Fault struct {
	Method     string // "" = any
	Path       string
	Kind       FaultKind
	Rate       float64
	OnCall     int
	Delay      time.Duration // for slow and hang
	AfterApply bool
	WritesOnly bool
	Status     int // for html: the status code (0 = 502)
	PerRequest int
	Mentions   string
}

// ApplyThenFail returns the faults that fail rate of the writes under path
// after storing them, split evenly over 502, connection reset and timeout
// (a hang of hang, 0 = until the client gives up).
func ApplyThenFail(path string, rate float64, hang time.Duration) []Fault {
	kinds := []FaultKind{FaultStatus502, FaultReset, FaultHang}
	out := make([]Fault, len(kinds))
	for i, k := range kinds {
		// Each fault draws on its own, so later ones see only what earlier
		// ones let through: raise their odds to keep the shares equal.
		p := rate / float64(len(kinds)) / (1 - rate*float64(i)/float64(len(kinds)))
		out[i] = Fault{Path: path, Kind: k, Rate: p, Delay: hang, AfterApply: true, WritesOnly: true}
	}
	return out
}

// Label is how the request log names a fault: its kind, prefixed with
// "applied+" when the write was stored before it failed.
func (f Fault) Label() string {
	if f.AfterApply {
		return "applied+" + string(f.Kind)
	}
	return string(f.Kind)
}

type faultState struct {
	id    int
	f     Fault
	calls int
	hits  map[[sha256.Size]byte]int // by request, with PerRequest
}

// AddFault registers a fault and returns its id.
func (s *Sim) AddFault(f Fault) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFault++
	s.faults = append(s.faults, &faultState{id: s.nextFault, f: f})
	return s.nextFault
}

// RemoveFault removes one fault by id.
func (s *Sim) RemoveFault(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.id == id {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			return
		}
	}
}

// ClearFaults removes every fault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// pickFault returns the first fault that fires for this request, if any.
// Every matching fault counts the call, so OnCall stays predictable.
func (s *Sim) pickFault(method, p string, body []byte) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var fired *Fault
	var key [sha256.Size]byte
	keyed := false
	for _, fs := range s.faults {
		if fs.f.Method != "" && !strings.EqualFold(fs.f.Method, method) {
			continue
		}
		if fs.f.WritesOnly && !isWrite(method) {
			continue
		}
		if !pathMatches(fs.f.Path, p) {
			continue
		}
		if fs.f.Mentions != "" && !strings.Contains(p, fs.f.Mentions) && !bytes.Contains(body, []byte(fs.f.Mentions)) {
			continue
		}
		fs.calls++
		hit := false
		if fs.f.OnCall > 0 {
			hit = fs.calls == fs.f.OnCall
		} else if fs.f.Rate > 0 {
			hit = s.rng.Float64() < fs.f.Rate
		}
		if hit && fired == nil && fs.f.PerRequest > 0 {
			if !keyed {
				key, keyed = sha256.Sum256([]byte(method+" "+p+"\n"+string(body))), true
			}
			if fs.hits == nil {
				fs.hits = map[[sha256.Size]byte]int{}
			}
			if hit = fs.hits[key] < fs.f.PerRequest; hit {
				fs.hits[key]++
			}
		}
		if hit && fired == nil {
			f := fs.f
			fired = &f
		}
	}
	return fired
}

func pathMatches(pattern, p string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	if ok, _ := path.Match(pattern, p); ok {
		return true
	}
	if !strings.HasSuffix(pattern, "*") {
		return false
	}
	// Prefix form: compare only as many segments as the pattern has.
	n := len(strings.Split(pattern, "/"))
	segs := strings.Split(p, "/")
	if len(segs) < n {
		return false
	}
	prefix := strings.Join(segs[:n], "/")
	ok, _ := path.Match(pattern, prefix)
	return ok
}

// applyFault performs the fault; it reports whether the request is finished.
func (s *Sim) applyFault(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	switch f.Kind {
	case FaultStatus500, FaultStatus502, FaultStatus503:
		code := map[FaultKind]int{FaultStatus500: 500, FaultStatus502: 502, FaultStatus503: 503}[f.Kind]
		writeError(w, code, http.StatusText(code)+" (injected by githubsim)", nil)
		return true
	case FaultSecondaryLimit:
		writeSecondary(w, time.Minute)
		return true
	case FaultHTML:
		code := f.Status
		if code == 0 {
			code = http.StatusBadGateway
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(htmlErrorPage))
		return true
	case FaultText:
		code := f.Status
		if code == 0 {
			code = http.StatusForbidden
		}
		http.Error(w, "refused (injected by githubsim)", code)
		return true
	case FaultSlow:
		s.wait(r, f.Delay)
		return r.Context().Err() != nil
	case FaultHang:
		s.wait(r, f.Delay)
		resetConn(w)
		return true
	case FaultReset:
		resetConn(w)
		return true
	}
	return false
}

// wait sleeps for d (0 = until the request or simulator ends).
func (s *Sim) wait(r *http.Request, d time.Duration) {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
	case <-r.Context().Done():
	case <-s.closed:
	}
}

func resetConn(w http.ResponseWriter) {
	h, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // aborts the response; net/http recovers it
	}
	conn, _, err := h.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// htmlErrorPage is what a proxy in front of the API answers when it fails.
const htmlErrorPage = `<!DOCTYPE html>
<html><head><title>Unicorn! &middot; GitHub</title></head>
<body><h1>No server is currently available to service your request.</h1>
<p>Sorry about that. Please try refreshing and contact us if the problem persists.</p></body></html>
`

// sinkWriter takes the answer of a request whose answer a fault replaces.
type sinkWriter struct {
	h      http.Header
	status int
}

func (w *sinkWriter) Header() http.Header { return w.h }
func (w *sinkWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
func (w *sinkWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
