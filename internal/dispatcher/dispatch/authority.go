package dispatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
)

// authority finds what the commenter may speak for (SPEC §7): their own
// account always; the repo with write, maintain or admin on it; the
// organisation owning the repo when they administer it. An answer GitHub
// refuses (403/404) counts as "no": it only ever narrows what is blocked.
func (d *Dispatcher) authority(ctx context.Context, t *Trigger) (blocklist.Authority, error) {
	a := blocklist.Authority{Commenter: t.Author, Repo: t.Repo}
	owner, name := split(t.Repo)
	perm, resp, err := d.gh.Repositories.GetPermissionLevel(ctx, owner, name, t.Author)
	switch {
	case err == nil:
		// The legacy field folds maintain into "write".
		p := strings.ToLower(perm.GetPermission())
		a.CanWrite = p == "admin" || p == "write"
	case refused(resp, err):
	default:
		return a, fmt.Errorf("read %s's permission on %s: %w", t.Author, t.Repo, err)
	}
	if strings.EqualFold(t.RepoOwnerType, "Organization") {
		m, resp, err := d.gh.Organizations.GetOrgMembership(ctx, t.Author, owner)
		switch {
		case err == nil:
			a.OrgAdmin = m.GetRole() == "admin" && m.GetState() == "active"
		case refused(resp, err):
		default:
			return a, fmt.Errorf("read %s's membership of %s: %w", t.Author, owner, err)
		}
	}
	return a, nil
}

// refused reports a plain "not found" or "forbidden" answer (not a rate limit).
func refused(resp *github.Response, err error) bool {
	if _, limited := ghclient.AsRateLimit(err, nil); limited {
		return false
	}
	return resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound)
}
