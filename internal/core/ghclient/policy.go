package ghclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// peekLimit bounds how much of an error body is read to spot a secondary
// rate limit; GitHub's error bodies are a few hundred bytes.
const peekLimit = 64 << 10

type action int

const (
	giveBack action = iota // hand the response or error to the caller
	retry                  // wait, then send again
	fail                   // return err instead of the response
)

type decision struct {
	action action
	wait   time.Duration
	err    error
	reason string // for the log
	status int
}

// idempotent methods may be sent twice without doing the thing twice.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// graphQLQuery reports a POST to the GraphQL endpoint: mention-runner
// sends only queries there (no mutations), so it reads like a GET: safe to
// repeat, and no content is created.
func graphQLQuery(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/graphql")
}

// write methods count toward GitHub's content-creation limits.
func write(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// decide classifies one attempt. attempt counts from 0; secondaryHits is
// how many secondary limits this request met before.
func (t *transport) decide(req *http.Request, resp *http.Response, err error, timedOut bool, attempt, secondaryHits int) decision {
	safe := idempotent(req.Method) || graphQLQuery(req) || t.o.RetryUnsafe || repeatable(req.Context())
	if err != nil {
		if req.Context().Err() != nil {
			return decision{action: giveBack}
		}
		if safe && (timedOut || transient(err)) {
			return decision{action: retry, wait: t.backoff(attempt), reason: "network: " + err.Error()}
		}
		return decision{action: giveBack}
	}
	d := decision{status: resp.StatusCode}
	if htmlAnswer(resp) {
		// Not GitHub's API answering: retry what is safe to repeat.
		if safe {
			d.action, d.wait, d.reason = retry, t.backoff(attempt), "HTML page instead of JSON"
		}
		return d
	}
	switch resp.StatusCode {
	case http.StatusForbidden, http.StatusTooManyRequests:
		return t.rateLimit(resp, secondaryHits)
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if !safe {
			return d
		}
		d.action, d.wait, d.reason = retry, t.backoff(attempt), "server error"
		if ra, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.o.Now()); ok {
			if ra > t.o.MaxWait {
				return decision{action: giveBack, status: resp.StatusCode}
			}
			d.wait = ra
		}
	}
	return d
}

// rateLimit handles 403/429. GitHub did not process a rate-limited
// request, so every method may be retried.
func (t *transport) rateLimit(resp *http.Response, secondaryHits int) decision {
	now := t.o.Now()
	h := resp.Header
	body := peekBody(resp)
	e := &RateLimitError{StatusCode: resp.StatusCode, Message: errorMessage(body)}
	fillRequest(e, resp)
	switch {
	case h.Get("X-RateLimit-Remaining") == "0":
		e.Reset = now.Add(secondaryDefaultWait)
		if sec, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			e.Reset = time.Unix(sec, 0)
		}
		// +1s: the reset is whole seconds and clocks differ a little
		e.Wait = max(e.Reset.Sub(now)+time.Second, time.Second)
	default:
		ra, hasRA := parseRetryAfter(h.Get("Retry-After"), now)
		switch {
		case hasRA:
			e.Wait = ra
		case resp.StatusCode == http.StatusTooManyRequests || secondaryWording(body):
			// no Retry-After: a minute, doubling on each repeat
			e.Wait = secondaryDefaultWait << min(secondaryHits, 16)
		default:
			return decision{action: giveBack, status: resp.StatusCode} // a real permission error
		}
		e.Secondary = true
		e.Reset = now.Add(e.Wait)
	}
	reason := "primary rate limit"
	if e.Secondary {
		reason = "secondary rate limit"
	}
	if t.o.MaxWait < 0 || e.Wait > t.o.MaxWait {
		return decision{action: fail, err: e, status: resp.StatusCode, reason: reason}
	}
	return decision{action: retry, wait: e.Wait, status: resp.StatusCode, reason: reason}
}

// peekBody reads the start of the body and puts it back, so the caller
// still gets the whole body.
func peekBody(resp *http.Response) []byte {
	peek, _ := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(peek), resp.Body), resp.Body}
	return peek
}

// secondaryWording spots GitHub's secondary-limit messages.
func secondaryWording(body []byte) bool {
	lower := bytes.ToLower(body)
	return bytes.Contains(lower, []byte("secondary rate limit")) || bytes.Contains(lower, []byte("abuse detection"))
}

// errorMessage reads GitHub's {"message": …}.
func errorMessage(body []byte) string {
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return ""
	}
	const maxLen = 300
	if len(msg.Message) > maxLen {
		return msg.Message[:maxLen] + "…"
	}
	return msg.Message
}

type readCloser struct {
	io.Reader
	io.Closer
}

// parseRetryAfter reads delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
// A date in the past means no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// beyond a day is nonsense; clamp so the Duration cannot overflow
		return time.Duration(min(secs, 86400)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// transient network failures: the connection broke or the server went away.
func transient(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// backoff is exponential with full jitter: uniform in [0, min(cap, base·2^n)].
func (t *transport) backoff(attempt int) time.Duration {
	ceil := backoffCap
	if attempt < 16 {
		ceil = min(backoffCap, backoffBase<<attempt)
	}
	t.randMu.Lock()
	defer t.randMu.Unlock()
	return time.Duration(t.o.Rand.Int64N(int64(ceil) + 1))
}

func fillRequest(e *RateLimitError, resp *http.Response) {
	if resp == nil {
		return
	}
	e.StatusCode = resp.StatusCode
	if resp.Request != nil {
		e.Method = resp.Request.Method
		if resp.Request.URL != nil {
			e.Path = resp.Request.URL.Path
		}
	}
}
