package ghclient

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

var epoch = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// sleeper records waits instead of sleeping.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// script answers the n-th request with the n-th handler (the last repeats)
// and records the requests and bodies it saw.
type script struct {
	mu       sync.Mutex
	steps    []http.HandlerFunc
	requests []*http.Request
	bodies   []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := min(len(s.requests), len(s.steps)-1)
	s.requests = append(s.requests, r)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	s.steps[i](w, r)
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func status(code int, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"message":"`+http.StatusText(code)+`"}`)
	}
}

func body(code int, text string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	}
}

var ok = body(200, `{"id":1,"number":1,"body":"ok"}`)

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

type fixture struct {
	srv    *httptest.Server
	script *script
	sleep  *sleeper
	client *github.Client
}

func newFixture(t *testing.T, o Options, steps ...http.HandlerFunc) *fixture {
	t.Helper()
	f := &fixture{script: &script{steps: steps}, sleep: &sleeper{}}
	f.srv = httptest.NewServer(f.script)
	t.Cleanup(f.srv.Close)
	o.BaseURL = f.srv.URL
	if o.Sleep == nil {
		o.Sleep = f.sleep.sleep
	}
	if o.Now == nil {
		o.Now = func() time.Time { return epoch }
	}
	o.Rand = rand.New(rand.NewPCG(1, 2))
	c, err := New(o)
	require.NoError(t, err)
	f.client = c
	return f
}

func (f *fixture) get(ctx context.Context) error {
	_, _, err := f.client.Issues.Get(ctx, "o", "r", 1)
	return err
}

func (f *fixture) post(ctx context.Context, text string) error {
	_, _, err := f.client.Issues.CreateComment(ctx, "o", "r", 1, &github.IssueComment{Body: github.String(text)})
	return err
}
