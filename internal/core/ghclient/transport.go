package ghclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
)

// exhaustedResetHeader keeps X-RateLimit-Reset of a successful response
// that used the last request of the quota. See hideExhaustedReset.
const exhaustedResetHeader = "X-Mention-Runner-Ratelimit-Reset"

type transport struct {
	o         Options
	base      http.RoundTripper
	authHosts map[string]bool
	randMu    sync.Mutex // *rand.Rand is not safe for concurrent use
}

// NewTransport wraps base (nil = http.DefaultTransport) with the retry,
// rate-limit, pacing and auth policy described in the package README.
func NewTransport(o Options, base http.RoundTripper) http.RoundTripper {
	o = o.withDefaults()
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{o: o, base: base, authHosts: map[string]bool{}}
	// A base URL that does not parse gets no hosts: the token is never sent.
	if b, u, err := o.urls(); err == nil {
		t.authHosts[strings.ToLower(b.Host)] = true
		t.authHosts[strings.ToLower(u.Host)] = true
	}
	return t
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	getBody, err := replayable(req)
	if err != nil {
		return nil, fmt.Errorf("ghclient: %s %s: buffer request body: %w", req.Method, req.URL.Path, err)
	}
	secondaryHits := 0
	for attempt := 0; ; attempt++ {
		if t.o.Pacer != nil && write(req.Method) && !graphQLQuery(req) {
			if err := t.o.Pacer.Wait(ctx); err != nil {
				return nil, fmt.Errorf("ghclient: %s %s: pacing writes: %w", req.Method, req.URL.Path, err)
			}
		}
		resp, timedOut, err := t.send(req, getBody)
		d := t.decide(req, resp, err, timedOut, attempt, secondaryHits)
		switch {
		case d.action == fail:
			drain(resp)
			return nil, d.err
		case d.action == giveBack || attempt >= t.o.MaxRetries || (sentOnce(ctx) && write(req.Method) && !refused(d.status)):
			if htmlAnswer(resp) {
				e := unexpectedAnswer(req, resp)
				drain(resp)
				return nil, e
			}
			if resp != nil {
				hideExhaustedReset(resp)
			}
			return resp, err
		}
		drain(resp)
		if d.reason == "secondary rate limit" {
			secondaryHits++
			if t.o.Pacer != nil {
				// every writer of the account waits, not only this request
				if err := t.o.Pacer.SlowDown(ctx, t.o.Now().Add(d.wait)); err != nil {
					t.o.Logger.WarnContext(ctx, "ghclient: could not share the slow-down with the account's other writers", "err", err)
				}
			}
		}
		t.log(ctx, req, d, attempt)
		if err := t.o.Sleep(ctx, d.wait); err != nil {
			return nil, fmt.Errorf("ghclient: %s %s: waiting %s to retry (%s): %w", req.Method, req.URL.Path, d.wait, d.reason, err)
		}
	}
}

// send makes one attempt under its own timeout. The timeout covers reading
// the body too: it is released when the caller closes the body.
func (t *transport) send(req *http.Request, getBody func() (io.ReadCloser, error)) (*http.Response, bool, error) {
	actx, cancel := context.WithTimeout(req.Context(), t.o.RequestTimeout)
	r := req.Clone(actx)
	if getBody != nil {
		body, err := getBody()
		if err != nil {
			cancel()
			return nil, false, fmt.Errorf("ghclient: replay request body: %w", err)
		}
		r.Body, r.GetBody = body, getBody
	}
	if t.o.Token != "" && r.Header.Get("Authorization") == "" && t.authHosts[strings.ToLower(r.URL.Host)] {
		r.Header.Set("Authorization", "Bearer "+t.o.Token)
	}
	if t.o.UserAgent != "" {
		r.Header.Set("User-Agent", t.o.UserAgent)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && req.Context().Err() == nil
		cancel()
		return nil, timedOut, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, false, nil
}

// replayable returns a function giving a fresh copy of the body for each
// attempt, buffering it when the request cannot make one itself.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close() // a RoundTripper must close the body it was given
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// hideExhaustedReset moves X-RateLimit-Reset aside when a request succeeded
// with no quota left. Otherwise go-github would refuse every later request
// until the reset without sending it, and this transport could not wait
// when the reset is near. The next request is sent; if GitHub refuses it,
// the transport waits or returns *RateLimitError as usual.
func hideExhaustedReset(resp *http.Response) {
	if resp.StatusCode >= 400 || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	if reset := resp.Header.Get("X-RateLimit-Reset"); reset != "" {
		resp.Header.Set(exhaustedResetHeader, reset)
		resp.Header.Del("X-RateLimit-Reset")
	}
}

func (t *transport) log(ctx context.Context, req *http.Request, d decision, attempt int) {
	level := slog.LevelDebug
	if strings.Contains(d.reason, "rate limit") {
		level = slog.LevelWarn
	}
	t.o.Logger.LogAttrs(ctx, level, "github request retry",
		slog.String("method", req.Method),
		slog.String("path", req.URL.Path),
		slog.Int("status", d.status),
		slog.Duration("wait", d.wait),
		slog.Int("attempt", attempt+1),
		slog.String("reason", d.reason))
}

// drain reads a little of a discarded body so the connection can be reused.
func drain(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
	_ = resp.Body.Close()
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

type sentOnceKey struct{}

// SendOnce makes the writes sent with ctx go out once: no automatic retry
// after an ambiguous answer (a network error, a 5xx, an HTML page), for a
// caller that finds out itself whether the write was stored (a repeated
// ref creation can re-create a ref deleted meanwhile). A rate limit's
// refusal (403/429: not processed) is still waited out and sent again.
func SendOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, sentOnceKey{}, true)
}

func sentOnce(ctx context.Context) bool {
	v, _ := ctx.Value(sentOnceKey{}).(bool)
	return v
}

type repeatableKey struct{}

// Repeatable marks the writes sent with ctx safe to repeat, so they are
// retried after an ambiguous answer like a GET, whatever RetryUnsafe says:
// for a write whose repeat creates nothing new (a git object, addressed
// by its content; a reaction GitHub answers with the one it has). The
// retry sends the same bytes. SendOnce wins over it.
func Repeatable(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatableKey{}, true)
}

func repeatable(ctx context.Context) bool {
	v, _ := ctx.Value(repeatableKey{}).(bool)
	return v
}

// refused: GitHub answered with a rate limit and did not process the request.
func refused(status int) bool {
	return status == http.StatusForbidden || status == http.StatusTooManyRequests
}
