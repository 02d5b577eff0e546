package githubsim

import (
	"context"
	"net/http"
	"strings"
)

type refInfo struct {
	name, sha, typ string
}

// listRefs returns every ref under refs/ whose full name starts with prefix.
func (s *Sim) listRefs(ctx context.Context, dir, prefix string) ([]refInfo, error) {
	out, err := s.runGit(ctx, dir, nil, nil, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	var refs []refInfo
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && strings.HasPrefix(f[0], prefix) {
			refs = append(refs, refInfo{name: f[0], sha: f[1], typ: f[2]})
		}
	}
	return refs, nil
}

// lookupRef returns the exact ref, if present.
func (s *Sim) lookupRef(ctx context.Context, dir, full string) (refInfo, bool, error) {
	refs, err := s.listRefs(ctx, dir, full)
	if err != nil {
		return refInfo{}, false, err
	}
	for _, r := range refs {
		if r.name == full {
			return r, true, nil
		}
	}
	return refInfo{}, false, nil
}

func (c *call) refJSON(full string, r refInfo) obj {
	return obj{
		"ref": r.name, "node_id": "REF_" + strings.ReplaceAll(r.name, "/", "_"),
		"url":    c.base + "repos/" + full + "/git/" + r.name,
		"object": obj{"type": r.typ, "sha": r.sha, "url": c.base + "repos/" + full + "/git/" + r.typ + "s/" + r.sha},
	}
}

func (c *call) getRef() {
	dir, full, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	r, found, err := c.s.lookupRef(c.r.Context(), dir, "refs/"+c.params["ref"])
	if err != nil {
		c.gitFailed(err)
		return
	}
	if !found {
		c.notFound()
		return
	}
	c.json(http.StatusOK, c.refJSON(full, r))
}

// matchingRefs lists refs whose name starts with refs/{ref} (string prefix,
// as GitHub: "heads/feat" matches "heads/feature"). Not paginated.
func (c *call) matchingRefs() {
	dir, full, _, ok := c.gitRepo("read")
	if !ok {
		return
	}
	refs, err := c.s.listRefs(c.r.Context(), dir, "refs/"+c.params["ref"])
	if err != nil {
		c.gitFailed(err)
		return
	}
	out := make([]any, 0, len(refs))
	for _, r := range refs {
		out = append(out, c.refJSON(full, r))
	}
	c.json(http.StatusOK, out)
}

// validRefName applies GitHub's rule (refs/ and at least two slashes) and
// git's own check.
func (s *Sim) validRefName(ctx context.Context, ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Count(ref, "/") < 2 {
		return false
	}
	_, err := s.runGit(ctx, "", nil, nil, "check-ref-format", ref)
	return err == nil
}

func (c *call) createRef() {
	var req struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	dir, full, refMu, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	if !c.s.validRefName(ctx, req.Ref) {
		c.err(http.StatusUnprocessableEntity, "Reference name must start with 'refs/', contain at least two slashes and be a valid git ref name", nil)
		return
	}
	typ, ok := c.existingObject(ctx, dir, req.SHA)
	if !ok {
		return
	}
	// Check and create under the repo's ref lock; the empty old value makes
	// git refuse too if a push created the ref in between.
	refMu.Lock()
	_, exists, err := c.s.lookupRef(ctx, dir, req.Ref)
	if err == nil && !exists {
		_, err = c.s.runGit(ctx, dir, nil, nil, "update-ref", "--no-deref", req.Ref, req.SHA, "")
		if err != nil {
			_, exists, _ = c.s.lookupRef(ctx, dir, req.Ref)
		}
	}
	refMu.Unlock()
	switch {
	case exists:
		c.err(http.StatusUnprocessableEntity, "Reference already exists", nil)
	case err != nil:
		c.err(http.StatusUnprocessableEntity, "Reference cannot be created: "+gitReason(err), nil)
	default:
		c.w.Header().Set("Location", c.base+"repos/"+full+"/git/"+req.Ref)
		c.json(http.StatusCreated, c.refJSON(full, refInfo{name: req.Ref, sha: req.SHA, typ: typ}))
	}
}

func gitReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func (c *call) updateRef() {
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	dir, full, refMu, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	name := "refs/" + c.params["ref"]
	typ, ok := c.existingObject(ctx, dir, req.SHA)
	if !ok {
		return
	}
	refMu.Lock()
	defer refMu.Unlock()
	cur, found, err := c.s.lookupRef(ctx, dir, name)
	if err != nil {
		c.gitFailed(err)
		return
	}
	if !found {
		c.err(http.StatusUnprocessableEntity, "Reference does not exist", nil)
		return
	}
	if !req.Force && cur.sha != req.SHA {
		if _, err := c.s.runGit(ctx, dir, nil, nil, "merge-base", "--is-ancestor", cur.sha, req.SHA); err != nil {
			c.err(http.StatusUnprocessableEntity, "Update is not a fast forward", nil)
			return
		}
	}
	if _, err := c.s.runGit(ctx, dir, nil, nil, "update-ref", "--no-deref", name, req.SHA, cur.sha); err != nil {
		c.err(http.StatusUnprocessableEntity, "Reference update failed: "+gitReason(err), nil)
		return
	}
	c.json(http.StatusOK, c.refJSON(full, refInfo{name: name, sha: req.SHA, typ: typ}))
}

func (c *call) deleteRef() {
	dir, _, refMu, ok := c.gitRepo("write")
	if !ok {
		return
	}
	ctx := c.r.Context()
	name := "refs/" + c.params["ref"]
	refMu.Lock()
	defer refMu.Unlock()
	cur, found, err := c.s.lookupRef(ctx, dir, name)
	if err != nil {
		c.gitFailed(err)
		return
	}
	if !found {
		c.err(http.StatusUnprocessableEntity, "Reference does not exist", nil)
		return
	}
	if _, err := c.s.runGit(ctx, dir, nil, nil, "update-ref", "--no-deref", "-d", name, cur.sha); err != nil {
		c.err(http.StatusUnprocessableEntity, "Reference cannot be deleted: "+gitReason(err), nil)
		return
	}
	c.noContent(http.StatusNoContent)
}
