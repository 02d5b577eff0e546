package loadtest

import (
	"net/http"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// Span is one request as the server saw it, in real time.
type Span struct {
	Method, Path string
	Start, End   time.Time
}

// spanLog records every request served, so a benchmark can tell how many
// requests a mention cost and how many of them had to wait for another.
type spanLog struct {
	mu    sync.Mutex
	spans []Span
}

func (l *spanLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := Span{Method: r.Method, Path: r.URL.Path, Start: time.Now()}
		defer func() {
			s.End = time.Now()
			l.mu.Lock()
			l.spans = append(l.spans, s)
			l.mu.Unlock()
		}()
		h.ServeHTTP(w, r) // w is passed on as is: faults hijack it
	})
}

// Spans returns the recorded requests and forgets them.
func (w *World) Spans() []Span {
	w.spans.mu.Lock()
	defer w.spans.mu.Unlock()
	out := w.spans.spans
	w.spans.spans = nil
	return out
}

// RoundTrips is the number of sequential round trips among spans
// (githubsim.RoundTrips).
func RoundTrips(spans []Span) int {
	reqs := make([]githubsim.LoggedRequest, len(spans))
	for i, sp := range spans {
		reqs[i] = githubsim.LoggedRequest{Method: sp.Method, Path: sp.Path, Start: sp.Start, End: sp.End}
	}
	return githubsim.RoundTrips(reqs)
}
