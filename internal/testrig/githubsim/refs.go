package githubsim

import (
	"errors"
	"net/http"
	"strings"
)

type refInfo struct {
	name, sha, typ string
}

func (c *call) refJSON(full string, r refInfo) obj {
	return obj{
		"ref": r.name, "node_id": "REF_" + strings.ReplaceAll(r.name, "/", "_"),
		"url":    c.base + "repos/" + full + "/git/" + r.name,
		"object": obj{"type": r.typ, "sha": r.sha, "url": c.base + "repos/" + full + "/git/" + r.typ + "s/" + r.sha},
	}
}

func (c *call) getRef() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	name := "refs/" + c.params["ref"]
	sha := g.ref(name)
	if sha == "" {
		c.notFound()
		return
	}
	c.json(http.StatusOK, c.refJSON(full, refInfo{name: name, sha: sha, typ: g.objectType(c.r.Context(), sha)}))
}

// matchingRefs lists refs whose name starts with refs/{ref} (string prefix,
// as GitHub: "heads/feat" matches "heads/feature"). Not paginated.
func (c *call) matchingRefs() {
	g, full, ok := c.gitRepo("read")
	if !ok {
		return
	}
	refs := g.listRefs(c.r.Context(), "refs/"+c.params["ref"])
	out := make([]any, 0, len(refs))
	for _, r := range refs {
		out = append(out, c.refJSON(full, r))
	}
	c.json(http.StatusOK, out)
}

func (c *call) createRef() {
	var req struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	g, full, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	if !validRefName(req.Ref) {
		c.err(http.StatusUnprocessableEntity, "Reference name must start with 'refs/', contain at least two slashes and be a valid git ref name", nil)
		return
	}
	typ, ok := c.existingObject(g, req.SHA)
	if !ok {
		return
	}
	switch err := g.createRef(req.Ref, req.SHA); {
	case errors.Is(err, errRefExists):
		c.err(http.StatusUnprocessableEntity, "Reference already exists", nil)
	case err != nil:
		c.err(http.StatusUnprocessableEntity, "Reference cannot be created: "+err.Error(), nil)
	default:
		c.w.Header().Set("Location", c.base+"repos/"+full+"/git/"+req.Ref)
		c.json(http.StatusCreated, c.refJSON(full, refInfo{name: req.Ref, sha: req.SHA, typ: typ}))
	}
}

func (c *call) updateRef() {
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	g, full, ok := c.gitWrite(&req)
	if !ok {
		return
	}
	ctx := c.r.Context()
	name := "refs/" + c.params["ref"]
	if c.s.isProtected(full, name) {
		// GitHub's answer to a ref update that a branch protection rule
		// refuses (required reviews, status checks, no direct pushes)
		c.err(http.StatusUnprocessableEntity, "Protected branch update failed for "+name+".", nil)
		return
	}
	typ, ok := c.existingObject(g, req.SHA)
	if !ok {
		return
	}
	// GitHub checks and moves a ref atomically: when another write moves it
	// between our check and our swap, decide again against what it holds now.
	for {
		cur := g.ref(name)
		if cur == "" {
			c.err(http.StatusUnprocessableEntity, "Reference does not exist", nil)
			return
		}
		if !req.Force && cur != req.SHA && !g.isAncestor(ctx, cur, req.SHA) {
			c.err(http.StatusUnprocessableEntity, "Update is not a fast forward", nil)
			return
		}
		err := g.casRef(name, cur, req.SHA)
		if err == nil {
			break
		}
		if !errors.Is(err, errRefMoved) {
			c.err(http.StatusUnprocessableEntity, "Reference update failed: "+err.Error(), nil)
			return
		}
	}
	c.json(http.StatusOK, c.refJSON(full, refInfo{name: name, sha: req.SHA, typ: typ}))
}

func (c *call) deleteRef() {
	g, _, ok := c.gitRepo("write")
	if !ok {
		return
	}
	name := "refs/" + c.params["ref"]
	cur := g.ref(name)
	if cur == "" {
		c.err(http.StatusUnprocessableEntity, "Reference does not exist", nil)
		return
	}
	if err := g.casRef(name, cur, ""); err != nil {
		c.err(http.StatusUnprocessableEntity, "Reference cannot be deleted: "+err.Error(), nil)
		return
	}
	c.noContent(http.StatusNoContent)
}
