package githubsim

import (
	"encoding/base64"
	"net/http"
	"path"
	"strings"
)

// defaultBranch returns the repository's default branch.
func (c *call) defaultBranch() string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if r := c.s.repos[lower(c.params["owner"]+"/"+c.params["repo"])]; r != nil {
		return r.meta.DefaultBranch
	}
	return "main"
}

// contentEntry renders one file or directory entry of the contents API.
func (c *call) contentEntry(full, ref, p, typ, sha string, size int) obj {
	self := c.base + "repos/" + full + "/contents/" + p + "?ref=" + ref
	kind := map[string]string{"blob": "blobs", "tree": "trees"}[typ]
	git := c.base + "repos/" + full + "/git/" + kind + "/" + sha
	html := c.base + full + "/blob/" + ref + "/" + p
	t := "file"
	var download any = c.base + full + "/raw/" + ref + "/" + p
	if typ == "tree" {
		t, download = "dir", nil
		html = c.base + full + "/tree/" + ref + "/" + p
	}
	return obj{
		"type": t, "name": path.Base(p), "path": p, "sha": sha, "size": size, "url": self,
		"git_url": git, "html_url": html, "download_url": download,
		"_links": obj{"self": self, "git": git, "html": html},
	}
}

func (c *call) getContents() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	ctx := c.r.Context()
	ref := c.query("ref")
	if ref == "" {
		ref = c.defaultBranch()
	}
	commit := g.resolveRev(ctx, ref)
	if commit == "" {
		c.err(http.StatusNotFound, "No commit found for the ref "+ref, nil)
		return
	}
	p := strings.Trim(c.params["path"], "/")
	it, found := g.lookupPath(ctx, g.treeOf(ctx, commit), p)
	if !found {
		c.notFound()
		return
	}
	switch it.typ() {
	case "blob":
		o, found := g.get(ctx, it.sha)
		if !found {
			c.notFound()
			return
		}
		e := c.contentEntry(full, ref, p, "blob", it.sha, len(o.data))
		e["content"], e["encoding"] = base64Lines(o.data), "base64"
		c.json(http.StatusOK, e)
	case "tree":
		list := []any{}
		err := g.lsTree(ctx, it.sha, "", false, func(name string, e treeItem, size int) {
			list = append(list, c.contentEntry(full, ref, strings.TrimPrefix(p+"/"+name, "/"), e.typ(), e.sha, max(size, 0)))
		})
		if err != nil {
			c.gitFailed(err)
			return
		}
		c.json(http.StatusOK, list)
	default:
		c.notFound()
	}
}

type contentPut struct {
	Message   *string     `json:"message"`
	Content   *string     `json:"content"`
	SHA       string      `json:"sha"`
	Branch    string      `json:"branch"`
	Author    *sigRequest `json:"author"`
	Committer *sigRequest `json:"committer"`
}

// putContents creates or updates one file with a real commit. An existing
// file needs its current blob sha: missing → 422, stale → 409, as GitHub.
func (c *call) putContents() {
	var req contentPut
	g, full, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	p := strings.Trim(c.params["path"], "/")
	switch {
	case p == "":
		c.invalid("Content", "path", "invalid", "path is required")
		return
	case req.Message == nil:
		c.invalid("Content", "message", "missing_field", "")
		return
	case req.Content == nil:
		c.invalid("Content", "content", "missing_field", "")
		return
	}
	data, err := base64.StdEncoding.DecodeString(*req.Content)
	if err != nil {
		c.invalid("Content", "content", "invalid", "content is not valid Base64")
		return
	}
	branch := req.Branch
	if branch == "" {
		branch = c.defaultBranch()
	}
	refName := "refs/heads/" + branch
	author, ok1 := c.s.toSig(req.Author, c.s.defaultSig(c.login))
	committer, ok2 := c.s.toSig(req.Committer, author)
	if !ok1 || !ok2 {
		c.invalid("Content", "author", "invalid", "date must be an ISO 8601 timestamp")
		return
	}

	head := g.resolveRef(ctx, refName)
	if head == "" {
		c.err(http.StatusNotFound, "Branch "+branch+" not found", nil)
		return
	}
	parentTree := g.treeOf(ctx, head)
	current := ""
	if it, found := g.lookupPath(ctx, parentTree, p); found {
		current = it.sha
	}
	switch {
	case current != "" && req.SHA == "":
		c.invalid("Content", "sha", "missing_field", "\"sha\" wasn't supplied.")
		return
	case current != "" && req.SHA != current:
		c.err(http.StatusConflict, p+" does not match "+req.SHA, nil)
		return
	case current == "" && req.SHA != "":
		c.err(http.StatusConflict, p+" does not match "+req.SHA+" (the file does not exist)", nil)
		return
	}
	files := map[string]flatEntry{}
	if err := g.flatten(ctx, parentTree, "", files); err != nil {
		c.gitFailed(err)
		return
	}
	blob := g.put("blob", data)
	setFile(files, p, flatEntry{mode: "100644", sha: blob})
	commit := g.putCommit(g.writeFlat(files), []string{head}, *req.Message, author, committer)
	if err := g.casRef(refName, head, commit); err != nil {
		// The branch moved under us: the caller's view is stale.
		c.err(http.StatusConflict, "branch "+branch+" was updated concurrently; retry", nil)
		return
	}
	co, err := commitJSON(ctx, g, c.base, full, commit)
	if err != nil {
		c.gitFailed(err)
		return
	}
	status := http.StatusOK
	if current == "" {
		status = http.StatusCreated
	}
	content := c.contentEntry(full, branch, p, "blob", blob, len(data))
	c.json(status, obj{"content": content, "commit": co})
}
