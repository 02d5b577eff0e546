package ghclient

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/go-github/v62/github"
)

// RateLimitError means GitHub asked us to wait longer than MaxWait. The
// request was not processed; it is safe to try again after Reset.
type RateLimitError struct {
	Reset      time.Time     // when GitHub should accept the request again (estimated for secondary limits)
	Secondary  bool          // secondary (abuse) limit rather than the hourly quota
	Wait       time.Duration // the wait GitHub asked for, from when it answered
	Method     string
	Path       string
	StatusCode int
	Message    string // GitHub's message, if it sent one
}

func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	msg := fmt.Sprintf("github %s rate limit on %s %s (HTTP %d): retry after %s (in %s, longer than we wait)",
		kind, e.Method, e.Path, e.StatusCode, e.Reset.UTC().Format(time.RFC3339), e.Wait.Round(time.Second))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// AsRateLimit finds a rate-limit failure in err: ours, or go-github's own
// *github.RateLimitError / *github.AbuseRateLimitError (which go-github
// returns without sending when an earlier response already hit a limit).
// now dates a secondary limit's Retry-After; nil means time.Now.
func AsRateLimit(err error, now func() time.Time) (*RateLimitError, bool) {
	if now == nil {
		now = time.Now
	}
	var ours *RateLimitError
	if errors.As(err, &ours) {
		return ours, true
	}
	var primary *github.RateLimitError
	if errors.As(err, &primary) {
		e := &RateLimitError{Reset: primary.Rate.Reset.Time, Message: primary.Message}
		fillRequest(e, primary.Response)
		e.Wait = max(0, e.Reset.Sub(now()))
		return e, true
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		e := &RateLimitError{Secondary: true, Message: abuse.Message, Wait: secondaryDefaultWait}
		if abuse.RetryAfter != nil {
			e.Wait = *abuse.RetryAfter
		}
		e.Reset = now().Add(e.Wait)
		fillRequest(e, abuse.Response)
		return e, true
	}
	return nil, false
}
