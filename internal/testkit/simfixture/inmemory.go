package simfixture

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/githubsim"
)

// InMemory returns a simulator that is served without a listener: its
// base URL and a RoundTripper that calls the simulator's handler in the
// caller's goroutine. Inside a testing/synctest bubble nothing then blocks
// on a socket, so a slow fault's delay passes on the bubble's clock and
// requests made together start at the same instant however busy the
// machine is: round trips counted from the log (githubsim.RoundTrips) are
// exact, not a race between the latency and the scheduler.
func InMemory(t testing.TB, o githubsim.Options) (*githubsim.Sim, string, http.RoundTripper) {
	t.Helper()
	sim, err := githubsim.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	return sim, sim.URL(), handlerTransport{sim.Handler()}
}

type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(r *http.Request) (res *http.Response, err error) {
	defer func() {
		// A fault that hijacks the connection (reset, hang) aborts the
		// handler: the client sees what a dropped connection gives it.
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("githubsim in memory: connection dropped (%v)", p)
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
