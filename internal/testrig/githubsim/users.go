package githubsim

import (
	"net/http"
)

func (c *call) getAuthUser() {
	if !c.requireLogin() {
		return
	}
	c.locked(func() func() {
		o := c.s.publicUserLocked(c.base, c.login)
		merge(o, obj{
			"private_gists": 0, "total_private_repos": 0, "owned_private_repos": 0,
			"disk_usage": 0, "collaborators": 0, "two_factor_authentication": true,
		})
		return c.jsonF(http.StatusOK, o)
	})
}

func (c *call) getUser() {
	c.locked(func() func() {
		if c.s.users[lower(c.params["user"])] == nil {
			return c.notFoundF()
		}
		return c.jsonF(http.StatusOK, c.s.publicUserLocked(c.base, c.params["user"]))
	})
}

// getMembership answers GET /orgs/{org}/memberships/{user}: 404 unless user
// is a member. Only members of the org (or the user themself) may look;
// others get 403 as on GitHub.
func (c *call) getMembership() {
	if !c.requireLogin() {
		return
	}
	c.locked(func() func() {
		org := c.s.users[lower(c.params["org"])]
		if org == nil || org.Kind != "Organization" {
			return c.notFoundF()
		}
		roles := c.s.members[lower(org.Login)]
		if roles[lower(c.login)] == "" && !equalFold(c.login, c.params["user"]) {
			return c.errF(http.StatusForbidden, "You must be a member of "+org.Login+" to see membership information for "+c.params["user"]+".")
		}
		role := roles[lower(c.params["user"])]
		if role == "" {
			return c.notFoundF()
		}
		u := c.s.users[lower(c.params["user"])]
		return c.jsonF(http.StatusOK, obj{
			"url":   c.base + "orgs/" + org.Login + "/memberships/" + u.Login,
			"state": "active", "role": role, "organization_url": c.base + "orgs/" + org.Login,
			"organization": c.s.orgSimpleLocked(c.base, org.Login),
			"user":         c.s.simpleUserLocked(c.base, u.Login),
		})
	})
}

func (c *call) getRepo() {
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		return c.jsonF(http.StatusOK, c.s.repoLocked(c.base, r, true, c.login))
	})
}

// getPermission answers the collaborator permission endpoint. "permission"
// uses GitHub's legacy names (maintain→write, triage→read); role_name is exact.
func (c *call) getPermission() {
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		u := c.s.users[lower(c.params["user"])]
		if u == nil || u.Kind != "User" {
			return c.notFoundF()
		}
		role := c.s.permissionLocked(r, u.Login)
		legacy := map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none"}[role]
		user := c.s.simpleUserLocked(c.base, u.Login)
		user["role_name"] = role
		user["permissions"] = obj{
			"admin": atLeast(role, "admin"), "maintain": atLeast(role, "maintain"), "push": atLeast(role, "write"),
			"triage": atLeast(role, "triage"), "pull": atLeast(role, "read"),
		}
		return c.jsonF(http.StatusOK, obj{"permission": legacy, "role_name": role, "user": user})
	})
}

func equalFold(a, b string) bool { return lower(a) == lower(b) }
