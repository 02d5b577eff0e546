package threadctx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/prdiff"
)

// FetchDiff reads a pull request's diff pinned to a commit: `GET
// /repos/{o}/{r}/compare/{base}...{head}` in the diff media type, head the
// sha the context recorded and base the pull request's base branch (head's
// changes since their merge base, as GitHub's own pull request diff),
// keeping at most max bytes (0 = prdiff.DefaultMaxBytes). The runner's
// fetch step calls it beside the code it fetches at head. A server that
// answers but will not send this diff (4xx other than an authentication
// or rate-limit refusal: a diff too large for it, a head it cannot find)
// gives a Diff with Unavailable set, not an error: the agent can work from
// the code alone.
func FetchDiff(ctx context.Context, c *github.Client, repo, base, head string, max int) (prdiff.Diff, error) {
	if max <= 0 {
		max = prdiff.DefaultMaxBytes
	}
	if strings.Count(repo, "/") != 1 || base == "" || head == "" {
		return prdiff.Diff{}, fmt.Errorf("threadctx: diff needs owner/name, base and head (got %q, %q, %q)", repo, base, head)
	}
	path := fmt.Sprintf("repos/%s/compare/%s...%s", repo, url.PathEscape(base), url.PathEscape(head))
	req, err := c.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return prdiff.Diff{}, fmt.Errorf("threadctx: build request %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/vnd.github.diff")
	w := &cappedWriter{max: max}
	if _, err := c.Do(ctx, req, w); err != nil {
		var ge *github.ErrorResponse
		if errors.As(err, &ge) && ge.Response != nil && refusedDiff(ge.Response.StatusCode) {
			return prdiff.Diff{Unavailable: fmt.Sprintf("%d %s", ge.Response.StatusCode, ge.Message)}, nil
		}
		return prdiff.Diff{}, fmt.Errorf("threadctx: GET %s (diff): %w", path, err)
	}
	text, cut := prdiff.Cut(w.buf, w.total)
	return prdiff.Diff{Text: text, Total: w.total, Truncated: cut}, nil
}

// refusedDiff: the server answered but will not give this diff.
func refusedDiff(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return false
	}
	return status >= 400 && status < 500
}
