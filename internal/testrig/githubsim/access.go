package githubsim

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxBodyRunes is GitHub's limit for issue, PR and comment bodies. GitHub
// counts characters, so the simulator counts Unicode code points (runes).
const maxBodyRunes = 65536

func checkBody(body string) error {
	if n := utf8.RuneCountInString(body); n > maxBodyRunes {
		return fmt.Errorf("body is too long (%d characters, maximum is %d)", n, maxBodyRunes)
	}
	return nil
}

// locked runs fn with the state lock held, then sends the response fn
// returned with the lock released (writing headers needs the lock).
func (c *call) locked(fn func() func()) {
	c.s.mu.Lock()
	send := fn()
	c.s.mu.Unlock()
	if send != nil {
		send()
	}
}

func (c *call) jsonF(status int, v any) func() { return func() { c.json(status, v) } }

func (c *call) errF(status int, msg string) func() { return func() { c.err(status, msg, nil) } }

func (c *call) invalidF(resource, field, code, msg string) func() {
	return func() { c.invalid(resource, field, code, msg) }
}

func (c *call) notFoundF() func() { return c.errF(http.StatusNotFound, "Not Found") }

// repoLocked finds the repository in the path and checks the caller has at
// least need. A repository the caller cannot read is "Not Found", as on GitHub.
func (c *call) repoLocked(need string) (*repoState, func()) {
	r := c.s.repos[lower(c.params["owner"]+"/"+c.params["repo"])]
	if r == nil {
		return nil, c.notFoundF()
	}
	perm := c.s.permissionLocked(r, c.login)
	if !atLeast(perm, "read") {
		return nil, c.notFoundF()
	}
	if !atLeast(perm, need) && need == "write" && strings.Contains(c.r.URL.Path, "/git/") && c.s.maintainerEditLocked(r, c.login) {
		perm = "write"
	}
	if !atLeast(perm, need) {
		if c.login == "" {
			return nil, c.errF(http.StatusUnauthorized, "Requires authentication")
		}
		return nil, c.errF(http.StatusForbidden, "Resource not accessible by personal access token")
	}
	return r, nil
}

// pageJSONF answers one page of list (see page), each element as item
// renders it; the list endpoints differ only in what they list and how.
func pageJSONF[T any](c *call, list []T, item func(T) any) func() {
	lo, hi := c.page(len(list))
	out := make([]any, 0, hi-lo)
	for _, v := range list[lo:hi] {
		out = append(out, item(v))
	}
	return c.jsonF(http.StatusOK, out)
}

// page reads per_page/page, sets the Link header for n items and returns
// the slice bounds to serve.
func (c *call) page(n int) (int, int) {
	q := c.r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, err := strconv.Atoi(q.Get("page"))
	if err != nil || pg < 1 {
		pg = 1
	}
	last := max((n+per-1)/per, 1)
	link := func(p int, rel string) string {
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = v
		}
		q2.Set("page", strconv.Itoa(p))
		q2.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf("<%s%s?%s>; rel=%q", strings.TrimSuffix(c.base, "/"), c.r.URL.Path, q2.Encode(), rel)
	}
	var links []string
	if pg < last {
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"), link(min(pg-1, last), "prev"))
	}
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
	start := min((pg-1)*per, n)
	return start, min(start+per, n)
}

// maintainerEditLocked reports whether login may write r's git data as a
// maintainer edit: r is the head repository of an open pull request that
// allows edits from maintainers, and login can write its base repository.
func (s *Sim) maintainerEditLocked(r *repoState, login string) bool {
	if login == "" {
		return false
	}
	for _, base := range s.repos {
		if base == r || !atLeast(s.permissionLocked(base, login), "write") {
			continue
		}
		for _, is := range base.issues {
			if is.pull != nil && is.state == "open" && is.pull.maintainerCanModify && strings.EqualFold(is.pull.headRepo, r.meta.FullName) {
				return true
			}
		}
	}
	return false
}
