package githubsim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// gitRepo checks access and returns the repository's git directory; on
// failure the response has been sent.
func (c *call) gitRepo(need string) (dir, full string, refMu *sync.Mutex, ok bool) {
	var fail func()
	c.locked(func() func() {
		r, f := c.repoLocked(need)
		if f != nil {
			fail = f
			return nil
		}
		dir, full, refMu = r.gitPath, r.meta.FullName, r.refMu
		return nil
	})
	if fail != nil {
		if c.login == "" && need != "read" {
			c.err(http.StatusUnauthorized, "Requires authentication", nil)
			return "", "", nil, false
		}
		fail()
		return "", "", nil, false
	}
	return dir, full, refMu, true
}

// gitWrite decodes a write request's body into req, then checks write
// access like gitRepo; on failure the response has been sent.
func (c *call) gitWrite(req any) (dir, full string, refMu *sync.Mutex, ok bool) {
	if !c.decode(req) {
		return "", "", nil, false
	}
	return c.gitRepo("write")
}

// existingObject is the type of the object sha names; when there is none it
// answers 422 as GitHub does and ok is false.
func (c *call) existingObject(ctx context.Context, dir, sha string) (typ string, ok bool) {
	typ = c.s.objectType(ctx, dir, sha)
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
	dir, full, _, ok := c.gitWrite(&req)
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
	out, err := c.s.runGit(c.r.Context(), dir, data, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		c.gitFailed(err)
		return
	}
	sha := strings.TrimSpace(string(out))
	c.json(http.StatusCreated, obj{"sha": sha, "url": c.base + "repos/" + full + "/git/blobs/" + sha})
}

func (c *call) getBlob() {
	dir, full, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	sha := c.params["sha"]
	if c.s.objectType(c.r.Context(), dir, sha) != "blob" {
		c.notFound()
		return
	}
	data, err := c.s.runGit(c.r.Context(), dir, nil, nil, "cat-file", "blob", sha)
	if err != nil {
		c.gitFailed(err)
		return
	}
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
	dir, full, _, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	// GitHub also accepts a commit sha here; git peels it to its tree.
	if t := c.s.objectType(ctx, dir, req.BaseTree); req.BaseTree != "" && t != "tree" && t != "commit" {
		c.invalid("Tree", "base_tree", "invalid", "base_tree is not a valid tree sha")
		return
	}
	sha, msg, err := c.s.buildTree(ctx, dir, req.BaseTree, req.Tree)
	if err != nil {
		c.gitFailed(err)
		return
	}
	if msg != "" {
		c.invalid("Tree", "tree", "invalid", msg)
		return
	}
	c.serveTree(dir, full, sha, false, http.StatusCreated)
}

// buildTree applies entries to base (or an empty tree) in a private index
// and writes the result. msg explains invalid input.
func (s *Sim) buildTree(ctx context.Context, dir, base string, entries []treeEntry) (sha, msg string, err error) {
	tmpDir := filepath.Join(s.gitDir, ".tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return "", "", err
	}
	index := filepath.Join(tmpDir, "index-"+uuid.NewString())
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	readArgs := []string{"read-tree", "--empty"}
	if base != "" {
		readArgs = []string{"read-tree", base}
	}
	if _, err := s.runGit(ctx, dir, nil, env, readArgs...); err != nil {
		return "", "", err
	}
	var info bytes.Buffer
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
			fmt.Fprintf(&info, "0 %s\t%s\n", strings.Repeat("0", 40), p)
		case e.Content != nil:
			out, err := s.runGit(ctx, dir, []byte(*e.Content), nil, "hash-object", "-w", "--stdin")
			if err != nil {
				return "", "", err
			}
			fmt.Fprintf(&info, "%s %s\t%s\n", e.Mode, strings.TrimSpace(string(out)), p)
		case shaVal != nil:
			if kind == "tree" {
				subtrees = append(subtrees, treeEntry{Path: p, SHA: e.SHA})
				continue
			}
			if kind == "blob" && s.objectType(ctx, dir, *shaVal) != "blob" {
				return "", fmt.Sprintf("tree.sha %s at index %d is not a valid blob", *shaVal, i), nil
			}
			fmt.Fprintf(&info, "%s %s\t%s\n", e.Mode, *shaVal, p)
		default:
			return "", fmt.Sprintf("tree entry %d needs sha or content", i), nil
		}
	}
	if info.Len() > 0 {
		if _, err := s.runGit(ctx, dir, info.Bytes(), env, "update-index", "--add", "--index-info"); err != nil {
			return "", "", err
		}
	}
	for _, st := range subtrees {
		var sub string
		_ = json.Unmarshal(st.SHA, &sub)
		if s.objectType(ctx, dir, sub) != "tree" {
			return "", fmt.Sprintf("tree.sha %s for %s is not a valid tree", sub, st.Path), nil
		}
		// Replace whatever is under the path with the given tree.
		out, err := s.runGit(ctx, dir, nil, env, "ls-files", "-z", "--", st.Path)
		if err != nil {
			return "", "", err
		}
		var rm bytes.Buffer
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				fmt.Fprintf(&rm, "0 %s\t%s\n", strings.Repeat("0", 40), f)
			}
		}
		if rm.Len() > 0 {
			if _, err := s.runGit(ctx, dir, rm.Bytes(), env, "update-index", "--index-info"); err != nil {
				return "", "", err
			}
		}
		if _, err := s.runGit(ctx, dir, nil, env, "read-tree", "--prefix="+st.Path+"/", sub); err != nil {
			return "", "", err
		}
	}
	out, err := s.runGit(ctx, dir, nil, env, "write-tree")
	if err != nil {
		return "", "", err
	}
	return strings.TrimSpace(string(out)), "", nil
}

func (c *call) getTree() {
	dir, full, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	sha := c.params["sha"]
	ctx := c.r.Context()
	switch c.s.objectType(ctx, dir, sha) {
	case "tree":
	case "commit":
		sha, _ = c.s.gitLine(ctx, dir, "rev-parse", sha+"^{tree}")
	default:
		if resolved := c.s.resolveRev(ctx, dir, sha); resolved != "" {
			sha, _ = c.s.gitLine(ctx, dir, "rev-parse", resolved+"^{tree}")
		} else {
			c.notFound()
			return
		}
	}
	rec := c.query("recursive")
	c.serveTree(dir, full, sha, rec != "" && rec != "0" && rec != "false", http.StatusOK)
}

func (c *call) serveTree(dir, full, sha string, recursive bool, status int) {
	args := []string{"ls-tree", "-l", "-z"}
	if recursive {
		args = append(args, "-r", "-t")
	}
	out, err := c.s.runGit(c.r.Context(), dir, nil, nil, append(args, sha)...)
	if err != nil {
		c.gitFailed(err)
		return
	}
	entries := []any{}
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type sha size
		if len(f) < 4 {
			continue
		}
		e := obj{"path": p, "mode": f[0], "type": f[1], "sha": f[2]}
		switch f[1] {
		case "blob":
			e["url"] = c.base + "repos/" + full + "/git/blobs/" + f[2]
			if n, err := strconv.Atoi(f[3]); err == nil {
				e["size"] = n
			}
		case "tree":
			e["url"] = c.base + "repos/" + full + "/git/trees/" + f[2]
		}
		entries = append(entries, e)
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
	dir, full, _, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	if req.Message == nil {
		c.invalid("Commit", "message", "missing_field", "")
		return
	}
	if c.s.objectType(ctx, dir, req.Tree) != "tree" {
		c.invalid("Commit", "tree", "invalid", "Tree SHA does not exist")
		return
	}
	for _, p := range req.Parents {
		if c.s.objectType(ctx, dir, p) != "commit" {
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
	sha, err := c.s.commitTree(ctx, dir, req.Tree, req.Parents, *req.Message, author, committer)
	if err != nil {
		c.gitFailed(err)
		return
	}
	c.serveCommit(dir, full, sha, http.StatusCreated)
}

func (c *call) getCommit() {
	dir, full, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	if c.s.objectType(c.r.Context(), dir, c.params["sha"]) != "commit" {
		c.notFound()
		return
	}
	c.serveCommit(dir, full, c.params["sha"], http.StatusOK)
}

func (c *call) serveCommit(dir, full, sha string, status int) {
	o, err := c.s.commitJSON(c.r.Context(), c.base, dir, full, sha)
	if err != nil {
		c.gitFailed(err)
		return
	}
	c.json(status, o)
}

// commitJSON renders a git commit object as the git data API does.
func (s *Sim) commitJSON(ctx context.Context, base, dir, full, sha string) (obj, error) {
	raw, err := s.runGit(ctx, dir, nil, nil, "cat-file", "commit", sha)
	if err != nil {
		return nil, err
	}
	head, msg, _ := strings.Cut(string(raw), "\n\n")
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
