package loadtest

import (
	"net/http"
	"sort"
	"sync"
	"time"
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

// RoundTrips is the number of sequential round trips among spans: the
// most requests that ran one after another without overlapping (greedy by
// earliest end, which finds that maximum). Requests made concurrently
// count once; a chain of dependent requests counts each.
func RoundTrips(spans []Span) int {
	s := append([]Span(nil), spans...)
	sort.Slice(s, func(i, j int) bool { return s[i].End.Before(s[j].End) })
	n := 0
	var last time.Time
	for _, sp := range s {
		if n == 0 || !sp.Start.Before(last) {
			n++
			last = sp.End
		}
	}
	return n
}
