// Package ghclient builds the project's GitHub API clients: a go-github
// client over a transport that retries what is safe to retry, waits out
// GitHub's rate limits when the wait is short, fails with *RateLimitError
// when it is not, and paces content-creating requests.
package ghclient

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/clock"
)

// Defaults for Options fields left zero.
const (
	DefaultBaseURL        = "https://api.github.com/"
	DefaultRequestTimeout = 30 * time.Second
	DefaultMaxRetries     = 4
	DefaultMaxWait        = 60 * time.Second
	// AccountLimitWait is the MaxWait of jobs that write for the bot
	// account (publish): GitHub's hourly content limit is per account,
	// shared with the dispatcher and other jobs, so when GitHub says slow
	// down such a job waits out the hour rather than fail.
	AccountLimitWait = 65 * time.Minute

	backoffBase = 500 * time.Millisecond
	backoffCap  = 30 * time.Second
	// secondaryDefaultWait is GitHub's advice when a secondary limit comes
	// without Retry-After: wait at least a minute, longer on each repeat.
	secondaryDefaultWait = time.Minute
)

// Options configure New and NewTransport.
type Options struct {
	BaseURL        string        // "" = https://api.github.com/; a trailing "/" is added
	Token          string        // sent only to the API and upload hosts, never on redirects elsewhere
	UserAgent      string        // "" keeps go-github's
	RequestTimeout time.Duration // per attempt, including reading the body; 0 = 30s
	MaxRetries     int           // 0 = 4; negative = no retries
	// MaxWait is the longest single wait accepted for Retry-After or
	// X-RateLimit-Reset; a longer one returns *RateLimitError. 0 = 60s;
	// negative = never wait for a rate limit.
	MaxWait time.Duration
	// RetryUnsafe retries POST/PATCH on 5xx and network errors too. Off by
	// default: the write may have landed. Callers that check idempotency
	// markers before writing set it.
	RetryUnsafe bool
	Pacer       *Pacer                                           // paces POST/PATCH/PUT/DELETE; nil = none
	Sleep       func(ctx context.Context, d time.Duration) error // test hook; nil = timer honouring ctx
	Now         func() time.Time                                 // test hook for rate-limit dates; nil = time.Now
	Rand        *rand.Rand                                       // jitter source; nil = randomly seeded
	Logger      *slog.Logger                                     // nil = discard
	// Base carries the requests New's client sends (test hook: a simulator
	// served in memory); nil = http.DefaultTransport.
	Base http.RoundTripper
}

// withDefaults fills zero fields; it never fails so NewTransport can use it.
func (o Options) withDefaults() Options {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(o.BaseURL, "/") {
		o.BaseURL += "/"
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Sleep == nil {
		o.Sleep = clock.Sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// urls parses the base URL and derives the upload URL the way GitHub lays
// them out: api.github.com → uploads.github.com, GHES /api/v3/ →
// /api/uploads/, anything else (a test server) → the base itself.
func (o Options) urls() (base, upload *url.URL, err error) {
	base, err = url.Parse(o.BaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("ghclient: base URL %q: %w", o.BaseURL, err)
	}
	if (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, nil, fmt.Errorf("ghclient: base URL %q: want an absolute http(s) URL such as %s", o.BaseURL, DefaultBaseURL)
	}
	upload = new(url.URL)
	*upload = *base
	switch {
	case strings.EqualFold(base.Host, "api.github.com"):
		upload.Host = "uploads.github.com"
	case strings.HasSuffix(base.Path, "/api/v3/"):
		upload.Path = strings.TrimSuffix(base.Path, "v3/") + "uploads/"
	}
	return base, upload, nil
}
