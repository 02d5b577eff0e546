package githubsim

import (
	"net/http"
)

// createFork answers 202 with the fork, creating it on first call. The fork
// lives under the caller (or the requested organization) with the same name
// and borrows the parent's git objects.
func (c *call) createFork() {
	if !c.requireLogin() {
		return
	}
	var req struct {
		Organization string `json:"organization"`
		Name         string `json:"name"`
	}
	if !c.decode(&req) {
		return
	}
	var src *Repo
	var fail func()
	owner, name := c.login, ""
	c.locked(func() func() {
		r, f := c.repoLocked("read")
		if f != nil {
			fail = f
			return nil
		}
		src, name = r.meta, r.meta.Name
		if req.Name != "" {
			name = req.Name
		}
		if req.Organization != "" {
			if c.s.members[lower(req.Organization)][lower(c.login)] == "" {
				fail = c.errF(http.StatusForbidden, "You do not have permission to create a fork in "+req.Organization)
				return nil
			}
			owner = req.Organization
		}
		if ex := c.s.repos[lower(owner+"/"+name)]; ex != nil {
			if ex.meta.Parent == "" || !equalFold(ex.meta.Parent, r.meta.FullName) {
				fail = c.invalidF("Repository", "name", "already_exists", "name already exists on this account")
			}
		}
		return nil
	})
	if fail != nil {
		fail()
		return
	}
	c.s.mu.Lock()
	exists := c.s.repos[lower(owner+"/"+name)] != nil
	c.s.mu.Unlock()
	if !exists {
		if _, err := c.s.addRepo(owner, name, src.Private, src.FullName, ""); err != nil && c.s.gitOf(owner+"/"+name) == nil {
			c.s.logf("githubsim: fork: %v", err)
			c.err(http.StatusInternalServerError, "fork failed: "+err.Error(), nil)
			return
		}
		c.s.mu.Lock()
		if fr := c.s.repos[lower(owner+"/"+name)]; fr != nil && !equalFold(owner, c.login) {
			fr.perms[lower(c.login)] = "admin"
		}
		c.s.mu.Unlock()
	}
	c.locked(func() func() {
		fr := c.s.repos[lower(owner+"/"+name)]
		return c.jsonF(http.StatusAccepted, c.s.repoLocked(c.base, fr, true, c.login))
	})
}

func (c *call) listForks() {
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		var visible []*repoState
		for _, f := range r.forks {
			if fr := c.s.repos[lower(f)]; fr != nil && atLeast(c.s.permissionLocked(fr, c.login), "read") {
				visible = append(visible, fr)
			}
		}
		return pageJSONF(c, visible, func(fr *repoState) any { return c.s.repoLocked(c.base, fr, false, "") })
	})
}
