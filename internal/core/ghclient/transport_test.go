package ghclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/clock"
)

func TestRetries(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		method    string // GET or POST
		steps     []http.HandlerFunc
		wantReqs  int
		wantErr   bool
		wantWaits []time.Duration // nil: don't check exact values
	}{
		{"GET 500 then ok", Options{}, "GET", []http.HandlerFunc{status(500), ok}, 2, false, nil},
		{"GET 502 503 504 then ok", Options{}, "GET", []http.HandlerFunc{status(502), status(503), status(504), ok}, 4, false, nil},
		{"GET gives up after MaxRetries", Options{MaxRetries: 2}, "GET", []http.HandlerFunc{status(500)}, 3, true, nil},
		{"negative MaxRetries disables", Options{MaxRetries: -1}, "GET", []http.HandlerFunc{status(500)}, 1, true, nil},
		{"GET connection dropped then ok", Options{}, "GET", []http.HandlerFunc{hangUp, ok}, 2, false, nil},
		{"GET 404 not retried", Options{}, "GET", []http.HandlerFunc{status(404)}, 1, true, nil},
		{"GET 422 not retried", Options{}, "GET", []http.HandlerFunc{status(422)}, 1, true, nil},
		{"403 permission not retried", Options{}, "GET", []http.HandlerFunc{body(403, `{"message":"Resource not accessible by integration"}`)}, 1, true, nil},
		{"503 Retry-After honoured", Options{}, "GET", []http.HandlerFunc{status(503, "Retry-After", "3"), ok}, 2, false, []time.Duration{3 * time.Second}},
		{"POST 500 not retried", Options{}, "POST", []http.HandlerFunc{status(500), ok}, 1, true, nil},
		{"POST connection dropped not retried", Options{}, "POST", []http.HandlerFunc{hangUp, ok}, 1, true, nil},
		{"POST 500 retried with RetryUnsafe", Options{RetryUnsafe: true}, "POST", []http.HandlerFunc{status(500), ok}, 2, false, nil},
		{"secondary Retry-After seconds, POST too", Options{}, "POST", []http.HandlerFunc{status(403, "Retry-After", "7"), ok}, 2, false, []time.Duration{7 * time.Second}},
		{"secondary 429 Retry-After", Options{}, "GET", []http.HandlerFunc{status(429, "Retry-After", "2"), ok}, 2, false, []time.Duration{2 * time.Second}},
		{"Retry-After HTTP date", Options{}, "POST", []http.HandlerFunc{status(403, "Retry-After", epoch.Add(42*time.Second).Format(http.TimeFormat)), ok}, 2, false, []time.Duration{42 * time.Second}},
		{"Retry-After date in past", Options{}, "GET", []http.HandlerFunc{status(403, "Retry-After", epoch.Add(-time.Hour).Format(http.TimeFormat)), ok}, 2, false, []time.Duration{0}},
		{"secondary by wording waits a minute", Options{}, "POST", []http.HandlerFunc{body(403, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`), ok}, 2, false, []time.Duration{time.Minute}},
		{"429 without Retry-After waits a minute", Options{}, "GET", []http.HandlerFunc{status(429), ok}, 2, false, []time.Duration{time.Minute}},
		{"primary exhausted waits for reset +1s", Options{}, "POST", []http.HandlerFunc{
			status(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(epoch.Add(10*time.Second).Unix(), 10)), ok,
		}, 2, false, []time.Duration{11 * time.Second}},
		{"primary reset already past waits 1s", Options{}, "GET", []http.HandlerFunc{
			status(429, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(epoch.Add(-5*time.Second).Unix(), 10)), ok,
		}, 2, false, []time.Duration{time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.opts, c.steps...)
			var err error
			if c.method == "POST" {
				err = f.post(context.Background(), "hi")
			} else {
				err = f.get(context.Background())
			}
			if c.wantErr {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, c.wantReqs, f.script.count())
			waits := f.sleep.got()
			assert.Len(t, waits, c.wantReqs-1)
			if c.wantWaits != nil {
				assert.Equal(t, c.wantWaits, waits)
			}
			var rl *RateLimitError
			assert.False(t, errors.As(err, &rl), "no RateLimitError when the wait was short")
		})
	}
}

func TestRateLimitBeyondMaxWait(t *testing.T) {
	reset := epoch.Add(30 * time.Minute)
	cases := []struct {
		name      string
		opts      Options
		steps     []http.HandlerFunc
		secondary bool
		reset     time.Time
		reqs      int
	}{
		{"primary reset far away", Options{}, []http.HandlerFunc{
			body(403, `{"message":"API rate limit exceeded"}`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10)),
		}, false, reset, 1},
		{"Retry-After too long", Options{}, []http.HandlerFunc{status(403, "Retry-After", "120")}, true, epoch.Add(2 * time.Minute), 1},
		{"MaxWait lowered", Options{MaxWait: 5 * time.Second}, []http.HandlerFunc{status(429, "Retry-After", "6")}, true, epoch.Add(6 * time.Second), 1},
		{"negative MaxWait never waits", Options{MaxWait: -1}, []http.HandlerFunc{status(429, "Retry-After", "1")}, true, epoch.Add(time.Second), 1},
		{"repeated secondary without Retry-After doubles past MaxWait", Options{}, []http.HandlerFunc{
			body(403, `{"message":"You have exceeded a secondary rate limit"}`),
		}, true, epoch.Add(2 * time.Minute), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.opts, c.steps...)
			err := f.post(context.Background(), "x")
			require.Error(t, err)
			var rl *RateLimitError
			require.ErrorAs(t, err, &rl)
			assert.Equal(t, c.secondary, rl.Secondary)
			assert.True(t, c.reset.Equal(rl.Reset), "reset %v, want %v", rl.Reset, c.reset)
			assert.Equal(t, "POST", rl.Method)
			assert.Equal(t, "/repos/o/r/issues/1/comments", rl.Path)
			assert.Equal(t, c.reqs, f.script.count())
			assert.Contains(t, rl.Error(), "rate limit on POST /repos/o/r/issues/1/comments")

			got, ok := AsRateLimit(err, nil)
			require.True(t, ok)
			assert.Same(t, rl, got)
		})
	}
}

func TestSecondaryRetryBudgetHandsBackResponse(t *testing.T) {
	f := newFixture(t, Options{MaxRetries: 1}, body(403,
		`{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
		"Retry-After", "1"))
	err := f.get(context.Background())
	var abuse *github.AbuseRateLimitError
	require.ErrorAs(t, err, &abuse, "go-github sees GitHub's own answer")
	assert.Equal(t, 2, f.script.count())
	rl, ok := AsRateLimit(err, func() time.Time { return epoch })
	require.True(t, ok)
	assert.True(t, rl.Secondary)
	assert.Equal(t, time.Second, rl.Wait)
}

func TestBodyReplayedIntact(t *testing.T) {
	text := strings.Repeat("payload ✓ ", 1000)
	f := newFixture(t, Options{RetryUnsafe: true}, status(502), hangUp, status(403, "Retry-After", "1"), ok)
	require.NoError(t, f.post(context.Background(), text))
	require.Equal(t, 4, f.script.count())
	for i, b := range f.script.bodies[:4] {
		if i == 1 {
			continue // hung up before reading
		}
		assert.Contains(t, b, `"body":"`+text+`"`, "attempt %d", i)
	}
	assert.Equal(t, f.script.bodies[0], f.script.bodies[3])
}

// A body without GetBody (a plain reader) is buffered by the transport.
func TestBodyWithoutGetBody(t *testing.T) {
	s := &script{steps: []http.HandlerFunc{status(500), status(200)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	sl := &sleeper{}
	rt := NewTransport(Options{BaseURL: srv.URL, Sleep: sl.sleep}, nil)
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/x", io.MultiReader(strings.NewReader("abc"), bytes.NewReader([]byte("def"))))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, []string{"abcdef", "abcdef"}, s.bodies)
}

func TestPerAttemptTimeoutRetried(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	first := func(w http.ResponseWriter, r *http.Request) {
		select { // hold the first attempt until the client gives up on it
		case <-r.Context().Done():
		case <-release:
		}
	}
	// The timeout must let the second attempt (a loopback GET) finish even on
	// a loaded machine; 50 ms did not with two CPU hogs running.
	f := newFixture(t, Options{RequestTimeout: time.Second}, first, ok)
	require.NoError(t, f.get(context.Background()))
	assert.Equal(t, 2, f.script.count())
}

func TestContextCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	limited := func(w http.ResponseWriter, r *http.Request) {
		cancel() // the caller gives up while GitHub asks us to wait
		status(403, "Retry-After", "30")(w, r)
	}
	// the real sleep, so cancellation is what ends the wait
	f := newFixture(t, Options{Sleep: clock.Sleep}, limited, ok)
	err := f.get(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, f.script.count())
}

func TestContextCancelledBeforeSend(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := newFixture(t, Options{}, ok)
	require.ErrorIs(t, f.get(ctx), context.Canceled)
	assert.Zero(t, f.script.count())
	assert.Empty(t, f.sleep.got())
}

func TestBackoffFullJitter(t *testing.T) {
	f := newFixture(t, Options{MaxRetries: 8}, status(500))
	require.Error(t, f.get(context.Background()))
	waits := f.sleep.got()
	require.Len(t, waits, 8)
	for i, w := range waits {
		ceil := min(backoffCap, backoffBase<<i)
		assert.GreaterOrEqual(t, w, time.Duration(0))
		assert.LessOrEqual(t, w, ceil, "retry %d", i)
	}
}

func TestTokenOnlyToGitHubHosts(t *testing.T) {
	var elsewhere http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = r.Header.Clone()
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	defer other.Close()
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
	}
	f := newFixture(t, Options{Token: "ghs_secret", UserAgent: "mention-runner/test"}, redirect)
	require.NoError(t, f.get(context.Background()))
	require.Equal(t, 1, f.script.count())
	assert.Equal(t, "Bearer ghs_secret", f.script.requests[0].Header.Get("Authorization"))
	assert.Equal(t, "mention-runner/test", f.script.requests[0].Header.Get("User-Agent"))
	require.NotNil(t, elsewhere)
	assert.Empty(t, elsewhere.Get("Authorization"), "token must not follow a redirect to another host")
}

func TestExhaustedQuotaDoesNotBlockNextRequest(t *testing.T) {
	reset := strconv.FormatInt(epoch.Add(5*time.Second).Unix(), 10)
	last := body(200, `{"id":1}`, "X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset)
	refused := status(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset)
	f := newFixture(t, Options{}, last, refused, ok)
	require.NoError(t, f.get(context.Background()))
	// go-github would refuse this one locally until the reset; we send it,
	// meet the 403, wait 6s and succeed.
	require.NoError(t, f.get(context.Background()))
	assert.Equal(t, 3, f.script.count())
	assert.Equal(t, []time.Duration{6 * time.Second}, f.sleep.got())
}

func TestPacerAppliedToWritesOnly(t *testing.T) {
	now := epoch
	clock := func() time.Time { return now }
	var paced []time.Duration
	p := NewPacer(-1, -1, time.Second, clock, func(ctx context.Context, d time.Duration) error {
		paced = append(paced, d)
		now = now.Add(d)
		return nil
	})
	f := newFixture(t, Options{Pacer: p}, ok)
	ctx := context.Background()
	require.NoError(t, f.get(ctx))
	require.NoError(t, f.post(ctx, "a"))
	require.NoError(t, f.get(ctx))
	require.NoError(t, f.post(ctx, "b"))
	assert.Equal(t, []time.Duration{time.Second}, paced, "second write waits the gap; reads are not paced")
}

func TestRetryLogged(t *testing.T) {
	var buf bytes.Buffer
	o := Options{Logger: newTextLogger(&buf)}
	f := newFixture(t, o, status(429, "Retry-After", "2"), ok)
	require.NoError(t, f.get(context.Background()))
	line := buf.String()
	for _, want := range []string{"level=WARN", "method=GET", "path=/repos/o/r/issues/1", "status=429", "wait=2s", `reason="secondary rate limit"`} {
		assert.Contains(t, line, want)
	}
}

// A write sent with Repeatable is retried after an ambiguous answer like
// a GET, without RetryUnsafe; SendOnce wins over it.
func TestRepeatable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ctx      func(context.Context) context.Context
		steps    []http.HandlerFunc
		wantReqs int
		wantErr  bool
	}{
		{"500 retried", Repeatable, []http.HandlerFunc{status(500), ok}, 2, false},
		{"connection dropped retried", Repeatable, []http.HandlerFunc{hangUp, ok}, 2, false},
		{"HTML page retried", Repeatable, []http.HandlerFunc{body(502, "<html>unicorn</html>", "Content-Type", "text/html"), ok}, 2, false},
		{"422 not retried", Repeatable, []http.HandlerFunc{status(422)}, 1, true},
		{"gives up after MaxRetries", Repeatable, []http.HandlerFunc{status(502)}, DefaultMaxRetries + 1, true},
		{"SendOnce wins", func(ctx context.Context) context.Context { return SendOnce(Repeatable(ctx)) }, []http.HandlerFunc{status(500), ok}, 1, true},
		{"unmarked not retried", func(ctx context.Context) context.Context { return ctx }, []http.HandlerFunc{status(500), ok}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{}, tc.steps...)
			err := f.post(tc.ctx(context.Background()), "hi")
			if tc.wantErr {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.wantReqs, f.script.count())
		})
	}
}
