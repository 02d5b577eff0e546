package githubsim

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// Renderers build GitHub's JSON shapes as maps so every property GitHub's
// OpenAPI description requires is present, nulls included (go-github's
// structs omit nil fields). All take s.mu held and the base URL.

type obj = map[string]any

// merge copies extra into o.
func merge(o, extra obj) {
	for k, v := range extra {
		o[k] = v
	}
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func tsOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

func nodeID(prefix string, id int64) string {
	return prefix + "_" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("sim%d", id)))
}

func (s *Sim) simpleUserLocked(base, login string) obj {
	u := s.users[lower(login)]
	if u == nil {
		// Unknown authors (seeded by helpers) still render; GitHub shows ghost.
		u = &User{ID: 10, Login: login, Kind: "User", NodeID: nodeID("U", 10)}
	}
	api := base + "users/" + u.Login
	return obj{
		"login": u.Login, "id": u.ID, "node_id": u.NodeID,
		"avatar_url":          base + "avatars/" + u.Login,
		"gravatar_id":         "",
		"url":                 api,
		"html_url":            base + u.Login,
		"followers_url":       api + "/followers",
		"following_url":       api + "/following{/other_user}",
		"gists_url":           api + "/gists{/gist_id}",
		"starred_url":         api + "/starred{/owner}{/repo}",
		"subscriptions_url":   api + "/subscriptions",
		"organizations_url":   api + "/orgs",
		"repos_url":           api + "/repos",
		"events_url":          api + "/events{/privacy}",
		"received_events_url": api + "/received_events",
		"type":                u.Kind,
		"site_admin":          false,
		"user_view_type":      "public",
	}
}

func (s *Sim) publicUserLocked(base, login string) obj {
	o := s.simpleUserLocked(base, login)
	u := s.users[lower(login)]
	created := s.now()
	if u != nil {
		created = u.CreatedAt
	}
	merge(o, obj{
		"name": login, "company": nil, "blog": "", "location": nil, "email": nil,
		"hireable": nil, "bio": nil, "twitter_username": nil,
		"public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": ts(created), "updated_at": ts(created),
	})
	return o
}

func (s *Sim) orgSimpleLocked(base, login string) obj {
	u := s.users[lower(login)]
	api := base + "orgs/" + u.Login
	return obj{
		"login": u.Login, "id": u.ID, "node_id": u.NodeID, "url": api,
		"repos_url": api + "/repos", "events_url": api + "/events", "hooks_url": api + "/hooks",
		"issues_url": api + "/issues", "members_url": api + "/members{/member}",
		"public_members_url": api + "/public_members{/member}",
		"avatar_url":         base + "avatars/" + u.Login, "description": nil,
	}
}

// repoLocked renders a repository; full adds the full-repository fields and
// the caller's permissions.
func (s *Sim) repoLocked(base string, r *repoState, full bool, viewer string) obj {
	m := r.meta
	api := base + "repos/" + m.FullName
	o := obj{
		"id": m.ID, "node_id": m.NodeID, "name": m.Name, "full_name": m.FullName,
		"private": m.Private, "owner": s.simpleUserLocked(base, m.Owner),
		"html_url": base + m.FullName, "description": nil, "fork": m.Fork, "url": api,
		"archive_url":       api + "/{archive_format}{/ref}",
		"assignees_url":     api + "/assignees{/user}",
		"blobs_url":         api + "/git/blobs{/sha}",
		"branches_url":      api + "/branches{/branch}",
		"collaborators_url": api + "/collaborators{/collaborator}",
		"comments_url":      api + "/comments{/number}",
		"commits_url":       api + "/commits{/sha}",
		"compare_url":       api + "/compare/{base}...{head}",
		"contents_url":      api + "/contents/{+path}",
		"contributors_url":  api + "/contributors",
		"deployments_url":   api + "/deployments",
		"downloads_url":     api + "/downloads",
		"events_url":        api + "/events",
		"forks_url":         api + "/forks",
		"git_commits_url":   api + "/git/commits{/sha}",
		"git_refs_url":      api + "/git/refs{/sha}",
		"git_tags_url":      api + "/git/tags{/sha}",
		"hooks_url":         api + "/hooks",
		"issue_comment_url": api + "/issues/comments{/number}",
		"issue_events_url":  api + "/issues/events{/number}",
		"issues_url":        api + "/issues{/number}",
		"keys_url":          api + "/keys{/key_id}",
		"labels_url":        api + "/labels{/name}",
		"languages_url":     api + "/languages",
		"merges_url":        api + "/merges",
		"milestones_url":    api + "/milestones{/number}",
		"notifications_url": api + "/notifications{?since,all,participating}",
		"pulls_url":         api + "/pulls{/number}",
		"releases_url":      api + "/releases{/id}",
		"stargazers_url":    api + "/stargazers",
		"statuses_url":      api + "/statuses/{sha}",
		"subscribers_url":   api + "/subscribers",
		"subscription_url":  api + "/subscription",
		"tags_url":          api + "/tags",
		"teams_url":         api + "/teams",
		"trees_url":         api + "/git/trees{/sha}",
		"visibility":        map[bool]string{true: "private", false: "public"}[m.Private],
	}
	if !full {
		return o
	}
	open := 0
	for _, is := range r.issues {
		if is.state == "open" {
			open++
		}
	}
	merge(o, obj{
		"clone_url": base + m.FullName + ".git", "git_url": strings.Replace(base, "http", "git", 1) + m.FullName + ".git",
		"ssh_url": "git@githubsim.invalid:" + m.FullName + ".git", "svn_url": base + m.FullName,
		"mirror_url": nil, "homepage": nil, "language": nil, "license": nil,
		"default_branch": m.DefaultBranch, "forks": len(r.forks), "forks_count": len(r.forks),
		"stargazers_count": 0, "watchers_count": 0, "watchers": 0, "size": 0,
		"open_issues": open, "open_issues_count": open, "network_count": len(r.forks), "subscribers_count": 0,
		"has_issues": true, "has_projects": true, "has_wiki": true, "has_pages": false,
		"has_downloads": true, "has_discussions": false, "archived": false, "disabled": false,
		"is_template": false, "topics": []string{}, "allow_forking": true,
		"pushed_at": ts(m.CreatedAt), "created_at": ts(m.CreatedAt), "updated_at": ts(m.CreatedAt),
	})
	if viewer != "" {
		p := s.permissionLocked(r, viewer)
		o["permissions"] = obj{
			"admin": atLeast(p, "admin"), "maintain": atLeast(p, "maintain"), "push": atLeast(p, "write"),
			"triage": atLeast(p, "triage"), "pull": atLeast(p, "read"),
		}
	}
	if m.Parent != "" {
		if pr := s.repos[lower(m.Parent)]; pr != nil {
			parent := s.repoLocked(base, pr, true, "")
			delete(parent, "parent")
			delete(parent, "source")
			o["parent"], o["source"] = parent, parent
		}
	}
	return o
}

func (s *Sim) labelLocked(base string, r *repoState, name string) obj {
	l := r.labels[lower(name)]
	if l == nil {
		return obj{"id": 0, "node_id": "", "url": "", "name": name, "description": nil, "color": "ededed", "default": false}
	}
	var desc any
	if l.description != "" {
		desc = l.description
	}
	return obj{
		"id": l.id, "node_id": nodeID("LA", l.id), "url": base + "repos/" + r.meta.FullName + "/labels/" + l.name,
		"name": l.name, "description": desc, "color": l.color, "default": false,
	}
}

func (s *Sim) associationLocked(r *repoState, login string) string {
	if lower(login) == lower(r.meta.Owner) {
		return "OWNER"
	}
	if roles := s.members[lower(r.meta.Owner)]; roles != nil && roles[lower(login)] != "" {
		return "MEMBER"
	}
	if _, ok := r.perms[lower(login)]; ok {
		return "COLLABORATOR"
	}
	return "NONE"
}

func (s *Sim) reactionRollup(url string, rs []*reaction) obj {
	o := obj{"url": url, "total_count": len(rs)}
	for _, k := range reactionKinds {
		o[k] = 0
	}
	for _, r := range rs {
		o[r.content] = o[r.content].(int) + 1
	}
	return o
}

func (s *Sim) issueLocked(base string, r *repoState, is *issue) obj {
	api := base + "repos/" + r.meta.FullName + "/issues/" + fmt.Sprint(is.number)
	labels := make([]any, 0, len(is.labels))
	for _, l := range is.labels {
		labels = append(labels, s.labelLocked(base, r, l))
	}
	var body, reason any
	if is.body != "" {
		body = is.body
	}
	if is.stateReason != "" {
		reason = is.stateReason
	}
	html := base + r.meta.FullName + "/issues/" + fmt.Sprint(is.number)
	if is.pull != nil {
		html = base + r.meta.FullName + "/pull/" + fmt.Sprint(is.number)
	}
	o := obj{
		"id": is.id, "node_id": nodeID("I", is.id), "url": api,
		"repository_url": base + "repos/" + r.meta.FullName,
		"labels_url":     api + "/labels{/name}", "comments_url": api + "/comments",
		"events_url": api + "/events", "html_url": html, "number": is.number,
		"state": is.state, "state_reason": reason, "title": is.title, "body": body,
		"user": s.simpleUserLocked(base, is.author), "labels": labels,
		"assignee": nil, "assignees": []any{}, "milestone": nil, "locked": false,
		"active_lock_reason": nil, "comments": len(is.comments),
		"closed_at": tsOrNil(is.closed), "created_at": ts(is.created), "updated_at": ts(is.updated),
		"closed_by": nil, "author_association": s.associationLocked(r, is.author),
		"reactions":    s.reactionRollup(api+"/reactions", is.reactions),
		"timeline_url": api + "/timeline",
	}
	if is.pull != nil {
		papi := base + "repos/" + r.meta.FullName + "/pulls/" + fmt.Sprint(is.number)
		o["pull_request"] = obj{
			"url": papi, "html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": nil,
		}
		o["draft"] = is.pull.draft
	}
	return o
}

func (s *Sim) commentLocked(base string, r *repoState, cm *comment) obj {
	api := base + "repos/" + r.meta.FullName + "/issues/comments/" + fmt.Sprint(cm.id)
	kind := "issues"
	if is := r.issues[cm.number]; is != nil && is.pull != nil {
		kind = "pull"
	}
	return obj{
		"id": cm.id, "node_id": nodeID("IC", cm.id), "url": api,
		"html_url":  fmt.Sprintf("%s%s/%s/%d#issuecomment-%d", base, r.meta.FullName, kind, cm.number, cm.id),
		"issue_url": fmt.Sprintf("%srepos/%s/issues/%d", base, r.meta.FullName, cm.number),
		"body":      cm.body, "user": s.simpleUserLocked(base, cm.author),
		"created_at": ts(cm.created), "updated_at": ts(cm.updated),
		"author_association": s.associationLocked(r, cm.author),
		"reactions":          s.reactionRollup(api+"/reactions", cm.reactions),
	}
}

func (s *Sim) reactionLocked(base string, rc *reaction) obj {
	return obj{
		"id": rc.id, "node_id": nodeID("REA", rc.id), "user": s.simpleUserLocked(base, rc.user),
		"content": rc.content, "created_at": ts(rc.created),
	}
}
