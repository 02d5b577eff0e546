package githubsim

import (
	"net/http"
	"strings"
)

// getRepoCommit answers GET /repos/{owner}/{repo}/commits/{ref}: the commit
// a sha, a full ref name ("refs/pull/1/head", "refs/mention-runner/pace/bot.7"),
// a ref named without its "refs/" ("heads/main") or a branch or tag name
// resolves to, in the
// repository-commits shape (the git commit under "commit"). An unknown ref
// is 422 "No commit found for SHA", as GitHub answers it. The diff (files,
// stats) is not computed: the project reads commits of empty trees here.
func (c *call) getRepoCommit() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	ctx := c.r.Context()
	ref := c.params["ref"]
	sha := ""
	// git's order for a name: as given (refs/…), then under refs/, tags, heads
	for _, name := range []string{ref, "refs/" + ref, "refs/tags/" + ref, "refs/heads/" + ref} {
		if !strings.HasPrefix(name, "refs/") {
			continue
		}
		if sha = g.resolveRef(ctx, name); sha != "" {
			break
		}
	}
	if sha == "" && g.objectType(ctx, ref) == "commit" {
		sha = ref
	}
	if sha == "" || g.objectType(ctx, sha) != "commit" {
		c.err(http.StatusUnprocessableEntity, "No commit found for SHA: "+ref, nil)
		return
	}
	inner, err := commitJSON(ctx, g, c.base, full, sha)
	if err != nil {
		c.gitFailed(err)
		return
	}
	parents := inner["parents"]
	delete(inner, "parents")
	delete(inner, "sha")
	delete(inner, "node_id")
	delete(inner, "html_url")
	inner["comment_count"] = 0
	c.json(http.StatusOK, obj{
		"sha": sha, "node_id": "C_" + sha[:12], "commit": inner,
		"url": c.base + "repos/" + full + "/commits/" + sha, "html_url": c.base + full + "/commit/" + sha,
		"comments_url": c.base + "repos/" + full + "/commits/" + sha + "/comments",
		"author":       nil, "committer": nil, "parents": parents,
		"stats": obj{"total": 0, "additions": 0, "deletions": 0}, "files": []any{},
	})
}
