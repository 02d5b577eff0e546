package githubsim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// gitRepo checks access and returns the repository's git store; on
// failure the response has been sent.
func (c *call) gitRepo(need string) (g *gitStore, full string, ok bool) {
	var fail func()
	c.locked(func() func() {
		r, f := c.repoLocked(need)
		if f != nil {
			fail = f
			return nil
		}
		g, full = r.git, r.meta.FullName
		return nil
	})
	if fail != nil {
		if c.login == "" && need != "read" {
			c.err(http.StatusUnauthorized, "Requires authentication", nil)
			return nil, "", false
		}
		fail()
		return nil, "", false
	}
	return g, full, true
}

// gitWrite decodes a write request's body into req, then checks write
// access like gitRepo; on failure the response has been sent.
func (c *call) gitWrite(req any) (g *gitStore, full string, ok bool) {
	if !c.decode(req) {
		return nil, "", false
	}
	return c.gitRepo("write")
}

// existingObject is the type of the object sha names; when there is none it
// answers 422 as GitHub does and ok is false.
func (c *call) existingObject(g *gitStore, sha string) (typ string, ok bool) {
	typ = g.objectType(c.r.Context(), sha)
	if typ == "" {
		c.err(http.StatusUnprocessableEntity, "Object does not exist", nil)
		return "", false
	}
	return typ, true
}

func (c *call) gitFailed(err error) {
	c.s.logf("githubsim: %s %s: %v", c.r.Method, c.r.URL.Path, err)
	c.err(http.StatusInternalServerError, "githubsim: git error: "+err.Error(), nil)
}

// base64Lines encodes like GitHub: standard base64 wrapped at 60 columns.
func base64Lines(data []byte) string {
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60])
		b.WriteByte('\n')
		enc = enc[60:]
	}
	b.WriteString(enc)
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *call) createBlob() {
	var req struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	g, full, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	if req.Content == nil {
		c.invalid("Blob", "content", "missing_field", "")
		return
	}
	data := []byte(*req.Content)
	switch req.Encoding {
	case "", "utf-8":
	case "base64":
		d, err := base64.StdEncoding.DecodeString(*req.Content)
		if err != nil {
			c.invalid("Blob", "content", "invalid", "content is not valid base64")
			return
		}
		data = d
	default:
		c.invalid("Blob", "encoding", "invalid", "encoding must be utf-8 or base64")
		return
	}
	sha := g.put("blob", data)
	c.json(http.StatusCreated, obj{"sha": sha, "url": c.base + "repos/" + full + "/git/blobs/" + sha})
}

func (c *call) getBlob() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	sha := c.params["sha"]
	o, found := g.get(c.r.Context(), sha)
	if !found || o.typ != "blob" {
		c.notFound()
		return
	}
	data := o.data
	c.json(http.StatusOK, obj{
		"sha": sha, "node_id": "B_" + sha[:12], "size": len(data), "url": c.base + "repos/" + full + "/git/blobs/" + sha,
		"content": base64Lines(data), "encoding": "base64",
	})
}

type treeEntry struct {
	Path    string          `json:"path"`
	Mode    string          `json:"mode"`
	Type    string          `json:"type"`
	SHA     json.RawMessage `json:"sha"`
	Content *string         `json:"content"`
}

var validModes = map[string]string{"100644": "blob", "100755": "blob", "120000": "blob", "040000": "tree", "160000": "commit"}

func (c *call) createTree() {
	var req struct {
		BaseTree string      `json:"base_tree"`
		Tree     []treeEntry `json:"tree"`
	}
	g, full, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	// GitHub also accepts a commit sha here, peeled to its tree.
	base := ""
	if req.BaseTree != "" {
		if base = g.treeOf(ctx, req.BaseTree); base == "" {
			c.invalid("Tree", "base_tree", "invalid", "base_tree is not a valid tree sha")
			return
		}
	}
	sha, msg, err := c.s.buildTree(ctx, g, base, req.Tree)
	if err != nil {
		c.gitFailed(err)
		return
	}
	if msg != "" {
		c.invalid("Tree", "tree", "invalid", msg)
		return
	}
	c.serveTree(g, full, sha, false, http.StatusCreated)
}

// buildTree applies entries to base (or an empty tree) the way git's index
// would and writes the result. msg explains invalid input.
func (s *Sim) buildTree(ctx context.Context, g *gitStore, base string, entries []treeEntry) (sha, msg string, err error) {
	files := map[string]flatEntry{}
	if base != "" {
		if err := g.flatten(ctx, base, "", files); err != nil {
			return "", "", err
		}
	}
	var subtrees []treeEntry
	for i, e := range entries {
		p := strings.Trim(e.Path, "/")
		kind, okMode := validModes[e.Mode]
		switch {
		case p == "" || strings.Contains(p, "//") || strings.HasPrefix(p, ".git/") || p == ".git":
			return "", fmt.Sprintf("tree.path at index %d is invalid", i), nil
		case !okMode:
			return "", fmt.Sprintf("tree.mode %q at index %d must be one of 100644, 100755, 040000, 160000, 120000", e.Mode, i), nil
		case e.Type != "" && e.Type != kind:
			return "", fmt.Sprintf("tree.type %q at index %d does not match mode %s", e.Type, i, e.Mode), nil
		}
		var shaVal *string
		if len(e.SHA) > 0 {
			if err := json.Unmarshal(e.SHA, &shaVal); err != nil {
				return "", fmt.Sprintf("tree.sha at index %d must be a string or null", i), nil
			}
		}
		hasSHA := len(e.SHA) > 0
		if hasSHA && e.Content != nil {
			return "", fmt.Sprintf("tree entry %d has both sha and content", i), nil
		}
		switch {
		case hasSHA && shaVal == nil: // explicit null deletes the path
			delete(files, p)
		case e.Content != nil:
			setFile(files, p, flatEntry{mode: e.Mode, sha: g.put("blob", []byte(*e.Content))})
		case shaVal != nil:
			if kind == "tree" {
				subtrees = append(subtrees, treeEntry{Path: p, SHA: e.SHA})
				continue
			}
			if kind == "blob" && g.objectType(ctx, *shaVal) != "blob" {
				return "", fmt.Sprintf("tree.sha %s at index %d is not a valid blob", *shaVal, i), nil
			}
			if !isSHA(*shaVal) {
				return "", fmt.Sprintf("tree.sha %s at index %d is not a valid sha", *shaVal, i), nil
			}
			setFile(files, p, flatEntry{mode: e.Mode, sha: *shaVal})
		default:
			return "", fmt.Sprintf("tree entry %d needs sha or content", i), nil
		}
	}
	for _, st := range subtrees {
		var sub string
		_ = json.Unmarshal(st.SHA, &sub)
		if g.objectType(ctx, sub) != "tree" {
			return "", fmt.Sprintf("tree.sha %s for %s is not a valid tree", sub, st.Path), nil
		}
		// Replace whatever is under the path with the given tree.
		removeUnder(files, st.Path)
		add := map[string]flatEntry{}
		if err := g.flatten(ctx, sub, st.Path+"/", add); err != nil {
			return "", "", err
		}
		for k, v := range add {
			setFile(files, k, v)
		}
	}
	return g.writeFlat(files), "", nil
}

func (c *call) getTree() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	ctx := c.r.Context()
	sha := g.treeOf(ctx, c.params["sha"])
	if sha == "" {
		if resolved := g.resolveRev(ctx, c.params["sha"]); resolved != "" {
			sha = g.treeOf(ctx, resolved)
		}
	}
	if sha == "" {
		c.notFound()
		return
	}
	rec := c.query("recursive")
	c.serveTree(g, full, sha, rec != "" && rec != "0" && rec != "false", http.StatusOK)
}

// lsTree lists a tree like `git ls-tree -l [-r -t]`: each entry with its
// path, and with -r the entries of subtrees after the subtree itself.
func (g *gitStore) lsTree(ctx context.Context, sha, prefix string, recursive bool, visit func(p string, e treeItem, size int)) error {
	o, ok := g.get(ctx, sha)
	if !ok || o.typ != "tree" {
		return fmt.Errorf("tree %s: %w", sha, errNoObject)
	}
	for _, e := range parseTree(o.data) {
		size := -1
		if e.typ() == "blob" {
			if b, ok := g.get(ctx, e.sha); ok {
				size = len(b.data)
			}
		}
		visit(prefix+e.name, e, size)
		if recursive && e.typ() == "tree" {
			if err := g.lsTree(ctx, e.sha, prefix+e.name+"/", true, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *call) serveTree(g *gitStore, full, sha string, recursive bool, status int) {
	entries := []any{}
	err := g.lsTree(c.r.Context(), sha, "", recursive, func(p string, it treeItem, size int) {
		e := obj{"path": p, "mode": it.apiMode(), "type": it.typ(), "sha": it.sha}
		switch it.typ() {
		case "blob":
			e["url"] = c.base + "repos/" + full + "/git/blobs/" + it.sha
			if size >= 0 {
				e["size"] = size
			}
		case "tree":
			e["url"] = c.base + "repos/" + full + "/git/trees/" + it.sha
		}
		entries = append(entries, e)
	})
	if err != nil {
		c.gitFailed(err)
		return
	}
	c.json(status, obj{"sha": sha, "url": c.base + "repos/" + full + "/git/trees/" + sha, "tree": entries, "truncated": false})
}

type sigRequest struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

func (s *Sim) toSig(in *sigRequest, fallback signature) (signature, bool) {
	if in == nil {
		return fallback, true
	}
	sig := fallback
	if in.Name != "" {
		sig.Name = in.Name
	}
	if in.Email != "" {
		sig.Email = in.Email
	}
	if in.Date != "" {
		t, err := time.Parse(time.RFC3339, in.Date)
		if err != nil {
			return sig, false
		}
		sig.Date = t
	}
	return sig, true
}

func (c *call) createCommit() {
	var req struct {
		Message   *string     `json:"message"`
		Tree      string      `json:"tree"`
		Parents   []string    `json:"parents"`
		Author    *sigRequest `json:"author"`
		Committer *sigRequest `json:"committer"`
	}
	g, full, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	if req.Message == nil {
		c.invalid("Commit", "message", "missing_field", "")
		return
	}
	if g.objectType(ctx, req.Tree) != "tree" {
		c.invalid("Commit", "tree", "invalid", "Tree SHA does not exist")
		return
	}
	for _, p := range req.Parents {
		if g.objectType(ctx, p) != "commit" {
			c.invalid("Commit", "parents", "invalid", "Parent SHA does not exist or is not a commit object")
			return
		}
	}
	author, ok1 := c.s.toSig(req.Author, c.s.defaultSig(c.login))
	committer, ok2 := c.s.toSig(req.Committer, author)
	if req.Committer == nil && req.Author != nil {
		committer = c.s.defaultSig(c.login)
		committer.Name, committer.Email = author.Name, author.Email
	}
	if !ok1 || !ok2 {
		c.invalid("Commit", "author", "invalid", "date must be an ISO 8601 timestamp")
		return
	}
	sha := g.putCommit(req.Tree, req.Parents, *req.Message, author, committer)
	c.serveCommit(g, full, sha, http.StatusCreated)
}

func (c *call) getCommit() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	if g.objectType(c.r.Context(), c.params["sha"]) != "commit" {
		c.notFound()
		return
	}
	c.serveCommit(g, full, c.params["sha"], http.StatusOK)
}

func (c *call) serveCommit(g *gitStore, full, sha string, status int) {
	o, err := commitJSON(c.r.Context(), g, c.base, full, sha)
	if err != nil {
		c.gitFailed(err)
		return
	}
	c.json(status, o)
}

// commitJSON renders a git commit object as the git data API does.
func commitJSON(ctx context.Context, g *gitStore, base, full, sha string) (obj, error) {
	raw, ok := g.get(ctx, sha)
	if !ok || raw.typ != "commit" {
		return nil, fmt.Errorf("commit %s: %w", sha, errNoObject)
	}
	head, msg, _ := strings.Cut(string(raw.data), "\n\n")
	o := obj{
		"sha": sha, "node_id": "C_" + sha[:12], "url": base + "repos/" + full + "/git/commits/" + sha,
		"html_url": base + full + "/commit/" + sha, "message": msg,
		"verification": obj{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil},
	}
	parents := []any{}
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree":
			o["tree"] = obj{"sha": v, "url": base + "repos/" + full + "/git/trees/" + v}
		case "parent":
			parents = append(parents, obj{"sha": v, "url": base + "repos/" + full + "/git/commits/" + v, "html_url": base + full + "/commit/" + v})
		case "author", "committer":
			o[k] = parseSig(v)
		}
	}
	o["parents"] = parents
	return o, nil
}

// parseSig parses "Name <email> 1700000000 +0000".
func parseSig(v string) obj {
	name, rest, _ := strings.Cut(v, " <")
	email, rest, _ := strings.Cut(rest, "> ")
	unix, _, _ := strings.Cut(rest, " ")
	sec, _ := strconv.ParseInt(unix, 10, 64)
	return obj{"name": name, "email": email, "date": ts(time.Unix(sec, 0))}
}
