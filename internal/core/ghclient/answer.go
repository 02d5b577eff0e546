package ghclient

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/google/go-github/v62/github"
)

// UnexpectedAnswerError is an answer the REST API never gives: an HTML
// page (a proxy's error page, a captive portal) instead of JSON. Whatever
// its status, it does not say whether the request was processed.
type UnexpectedAnswerError struct {
	Method, Path string
	StatusCode   int
	ContentType  string
	Excerpt      string // the page's title or its first characters
}

func (e *UnexpectedAnswerError) Error() string {
	return fmt.Sprintf("github answered %s %s with HTTP %d and %s instead of JSON (%q): not counted as success; check GITHUB_API_URL and any proxy in between",
		e.Method, e.Path, e.StatusCode, e.ContentType, e.Excerpt)
}

// htmlAnswer reports whether resp is an HTML page (a redirect's body
// does not count: the client follows it).
func htmlAnswer(resp *http.Response) bool {
	if resp == nil || resp.StatusCode/100 == 3 {
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func unexpectedAnswer(req *http.Request, resp *http.Response) *UnexpectedAnswerError {
	body := peekBody(resp)
	excerpt := ""
	if m := titleRE.FindSubmatch(body); m != nil {
		excerpt = strings.TrimSpace(string(m[1]))
	} else {
		excerpt = strings.Join(strings.Fields(string(body)), " ")
	}
	if r := []rune(excerpt); len(r) > 120 {
		excerpt = string(r[:120]) + "…"
	}
	return &UnexpectedAnswerError{Method: req.Method, Path: req.URL.Path, StatusCode: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Excerpt: excerpt}
}

// Ambiguous reports whether err leaves open that GitHub applied the
// request: a broken or timed-out connection, a 5xx, an HTML page. A rate
// limit or another 4xx means it was not applied.
func Ambiguous(err error) bool {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return false
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		return er.Response != nil && er.Response.StatusCode >= http.StatusInternalServerError
	}
	return true
}
