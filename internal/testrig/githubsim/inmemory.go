package githubsim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
)

// InMemory serves each request by calling h in the caller's goroutine, with
// no listener, so inside a testing/synctest bubble no request waits on a
// socket and time moves only once every client is blocked.
func InMemory(h http.Handler) http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(r *http.Request) (res *http.Response, err error) {
	defer func() {
		// A fault that hijacks the connection (reset, hang) aborts the
		// handler: the client sees what a dropped connection gives it, a
		// reset its retries know (over a socket: ECONNRESET or EOF).
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("githubsim in memory: connection dropped (%v): %w", p, syscall.ECONNRESET)
		}
	}()
	// What a server's request has that a client's may not.
	sr := r.Clone(r.Context())
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	sr.RequestURI, sr.RemoteAddr, sr.Host = r.URL.RequestURI(), "127.0.0.1:1", r.URL.Host
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, sr)
	res = rec.Result()
	res.Request = r
	return res, nil
}
