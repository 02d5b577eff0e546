package githubsim

import (
	"net/http"
	"strings"
)

// compareDiff serves GET /repos/{o}/{r}/compare/{base}...{head} in the
// diff media type (application/vnd.github.diff): `git diff base...head`,
// the changes of head since its merge base with base, as GitHub documents
// it. base and head are a branch, a tag or a commit sha of the repository
// (a fork's pull request head is here under refs/pull/N/head). The JSON
// comparison object is not simulated: nothing here reads it, and a 415
// says so rather than an answer of the wrong shape.
func (c *call) compareDiff() {
	if !strings.Contains(c.r.Header.Get("Accept"), "diff") {
		c.err(http.StatusUnsupportedMediaType, "githubsim: compare is simulated in the diff media type only", nil)
		return
	}
	g, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	baseName, headName, found := strings.Cut(c.params["basehead"], "...")
	if !found || baseName == "" || headName == "" {
		c.notFound()
		return
	}
	ctx := c.r.Context()
	base, head := g.resolveRev(ctx, baseName), g.resolveRev(ctx, headName)
	if base == "" || head == "" {
		c.notFound() // GitHub: "Not Found" for a ref or commit it does not know
		return
	}
	// A pull request seeded with a fixed diff (CreatePR) serves it for its
	// own base branch and head, as it does on GET pulls/N.
	var fixed string
	c.locked(func() func() {
		r := c.s.repos[lower(c.params["owner"]+"/"+c.params["repo"])]
		if r == nil {
			return nil
		}
		for _, is := range r.issues {
			if p := is.pull; p != nil && p.diff != "" && p.baseRef == baseName && p.headSHA == head {
				fixed = p.diff
			}
		}
		return nil
	})
	d := fixed
	if d == "" {
		var err error
		if d, err = g.diff(ctx, base, head); err != nil {
			c.err(http.StatusInternalServerError, "githubsim: diff: "+err.Error(), nil)
			return
		}
	}
	c.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write([]byte(d))
}
