package githubsim

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
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
	dir, full, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	ctx := c.r.Context()
	ref := c.query("ref")
	if ref == "" {
		ref = c.defaultBranch()
	}
	commit := c.s.resolveRev(ctx, dir, ref)
	if commit == "" {
		c.err(http.StatusNotFound, "No commit found for the ref "+ref, nil)
		return
	}
	p := strings.Trim(c.params["path"], "/")
	spec := commit + ":" + p
	sha, err := c.s.gitLine(ctx, dir, "rev-parse", "-q", "--verify", spec)
	if err != nil || sha == "" {
		c.notFound()
		return
	}
	switch c.s.objectType(ctx, dir, sha) {
	case "blob":
		data, err := c.s.runGit(ctx, dir, nil, nil, "cat-file", "blob", sha)
		if err != nil {
			c.gitFailed(err)
			return
		}
		o := c.contentEntry(full, ref, p, "blob", sha, len(data))
		o["content"], o["encoding"] = base64Lines(data), "base64"
		c.json(http.StatusOK, o)
	case "tree":
		out, err := c.s.runGit(ctx, dir, nil, nil, "ls-tree", "-l", "-z", sha)
		if err != nil {
			c.gitFailed(err)
			return
		}
		list := []any{}
		for _, rec := range strings.Split(string(out), "\x00") {
			meta, name, ok := strings.Cut(rec, "\t")
			f := strings.Fields(meta)
			if !ok || len(f) < 4 {
				continue
			}
			size, _ := strconv.Atoi(f[3])
			list = append(list, c.contentEntry(full, ref, strings.TrimPrefix(p+"/"+name, "/"), f[1], f[2], size))
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
	dir, full, refMu, ok := c.gitWrite(&req)
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

	refMu.Lock()
	defer refMu.Unlock()
	head := c.s.resolveRef(ctx, dir, refName)
	if head == "" {
		c.err(http.StatusNotFound, "Branch "+branch+" not found", nil)
		return
	}
	current, _ := c.s.gitLine(ctx, dir, "rev-parse", "-q", "--verify", head+":"+p)
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
	commit, blob, err := c.s.commitFile(ctx, dir, head, p, data, *req.Message, author, committer)
	if err != nil {
		c.gitFailed(err)
		return
	}
	if _, err := c.s.runGit(ctx, dir, nil, nil, "update-ref", refName, commit, head); err != nil {
		// The branch moved under us (a push): the caller's view is stale.
		c.err(http.StatusConflict, "branch "+branch+" was updated concurrently; retry", nil)
		return
	}
	co, err := c.s.commitJSON(ctx, c.base, dir, full, commit)
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

// commitFile writes data at p on top of parent and returns the new commit
// and blob shas.
func (s *Sim) commitFile(ctx context.Context, dir, parent, p string, data []byte, msg string, author, committer signature) (string, string, error) {
	out, err := s.runGit(ctx, dir, data, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", "", err
	}
	blob := strings.TrimSpace(string(out))
	tmpDir := filepath.Join(s.gitDir, ".tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return "", "", err
	}
	index := filepath.Join(tmpDir, "index-"+uuid.NewString())
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := s.runGit(ctx, dir, nil, env, "read-tree", parent); err != nil {
		return "", "", err
	}
	if _, err := s.runGit(ctx, dir, []byte("100644 "+blob+"\t"+p+"\n"), env, "update-index", "--add", "--index-info"); err != nil {
		return "", "", err
	}
	tree, err := s.runGit(ctx, dir, nil, env, "write-tree")
	if err != nil {
		return "", "", err
	}
	commit, err := s.commitTree(ctx, dir, strings.TrimSpace(string(tree)), []string{parent}, msg, author, committer)
	return commit, blob, err
}
