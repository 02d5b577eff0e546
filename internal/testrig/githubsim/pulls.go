package githubsim

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// prLive is what git says about a PR at request time.
type prLive struct {
	headSHA, baseSHA string
	diff             string
	commits          int
}

func (c *call) pullLocked(need string) (*repoState, *issue, func()) {
	r, is, fail := c.issueLocked(need)
	if fail != nil {
		return nil, nil, fail
	}
	if is.pull == nil {
		return nil, nil, c.notFoundF()
	}
	return r, is, nil
}

// livePR reads head/base tips and the diff (no lock held).
func (s *Sim) livePR(ctx context.Context, base, headRepo *gitStore, p pull, number int) prLive {
	lv := prLive{headSHA: p.headSHA, baseSHA: p.baseSHA, diff: p.diff, commits: 1}
	if sha := headRepo.resolveRef(ctx, "refs/heads/"+p.headRef); sha != "" {
		lv.headSHA = sha
	}
	if sha := base.resolveRef(ctx, "refs/heads/"+p.baseRef); sha != "" {
		lv.baseSHA = sha
	}
	if p.diff != "" {
		return lv
	}
	// The head commit is in the base repo under refs/pull/N/head (fetched from
	// forks when the PR was opened); prefer the live branch when it is local.
	head := lv.headSHA
	if base.objectType(ctx, head) == "" {
		head = base.resolveRef(ctx, fmt.Sprintf("refs/pull/%d/head", number))
	}
	if head == "" || lv.baseSHA == "" {
		return lv
	}
	if d, err := base.diff(ctx, lv.baseSHA, head); err == nil {
		lv.diff = d
	} else {
		s.logf("githubsim: diff %s...%s: %v", lv.baseSHA, head, err)
	}
	lv.commits = base.countCommits(ctx, lv.baseSHA, head)
	return lv
}

func diffStats(diff string) (adds, dels, files int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			files++
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			adds++
		case strings.HasPrefix(l, "-"):
			dels++
		}
	}
	return
}

func (s *Sim) pullJSONLocked(base string, r *repoState, is *issue, lv prLive) obj {
	p := is.pull
	full := r.meta.FullName
	api := fmt.Sprintf("%srepos/%s/pulls/%d", base, full, is.number)
	html := fmt.Sprintf("%s%s/pull/%d", base, full, is.number)
	issueAPI := fmt.Sprintf("%srepos/%s/issues/%d", base, full, is.number)
	href := func(u string) obj { return obj{"href": u} }
	side := func(repoName, ref, sha string) obj {
		hr := s.repos[lower(repoName)]
		o := obj{"ref": ref, "sha": sha, "repo": nil, "user": nil, "label": ref}
		if hr != nil {
			o["label"] = hr.meta.Owner + ":" + ref
			o["repo"] = s.repoLocked(base, hr, true, "")
			o["user"] = s.simpleUserLocked(base, hr.meta.Owner)
		}
		return o
	}
	adds, dels, files := diffStats(lv.diff)
	var body any
	if is.body != "" {
		body = is.body
	}
	labels := make([]any, 0, len(is.labels))
	for _, l := range is.labels {
		labels = append(labels, s.labelLocked(base, r, l))
	}
	return obj{
		"id": p.id, "node_id": nodeID("PR", p.id), "url": api, "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issueAPI,
		"commits_url": api + "/commits", "review_comments_url": api + "/comments",
		"review_comment_url": base + "repos/" + full + "/pulls/comments{/number}",
		"comments_url":       issueAPI + "/comments", "statuses_url": base + "repos/" + full + "/statuses/" + lv.headSHA,
		"number": is.number, "state": is.state, "locked": false, "title": is.title, "body": body,
		"user": s.simpleUserLocked(base, is.author), "labels": labels, "milestone": nil,
		"active_lock_reason": nil, "created_at": ts(is.created), "updated_at": ts(is.updated),
		"closed_at": tsOrNil(is.closed), "merged_at": nil, "merge_commit_sha": nil,
		"assignee": nil, "assignees": []any{}, "requested_reviewers": []any{}, "requested_teams": []any{},
		"head": side(p.headRepo, p.headRef, lv.headSHA), "base": side(r.meta.FullName, p.baseRef, lv.baseSHA),
		"_links": obj{
			"self": href(api), "html": href(html), "issue": href(issueAPI), "comments": href(issueAPI + "/comments"),
			"review_comments": href(api + "/comments"), "review_comment": href(base + "repos/" + full + "/pulls/comments{/number}"),
			"commits": href(api + "/commits"), "statuses": href(base + "repos/" + full + "/statuses/" + lv.headSHA),
		},
		"author_association": s.associationLocked(r, is.author), "auto_merge": nil, "draft": p.draft,
		"merged": false, "mergeable": nil, "rebaseable": nil, "mergeable_state": "unknown", "merged_by": nil,
		"comments": len(is.comments), "review_comments": len(p.rcomms), "maintainer_can_modify": p.maintainerCanModify,
		"commits": lv.commits, "additions": adds, "deletions": dels, "changed_files": files,
	}
}

// livePull reads the request's pull request under the lock and works out
// its live state (head, diff) outside it; on a refusal it has answered
// already and ok is false.
func (c *call) livePull() (lv prLive, baseGit *gitStore, ok bool) {
	var headGit *gitStore
	var snap pull
	var number int
	var fail func()
	c.locked(func() func() {
		r, is, f := c.pullLocked("read")
		if f != nil {
			fail = f
			return nil
		}
		baseGit, headGit, snap, number = r.git, r.git, *is.pull, is.number
		if hr := c.s.repos[lower(is.pull.headRepo)]; hr != nil {
			headGit = hr.git
		}
		return nil
	})
	if fail != nil {
		fail()
		return lv, nil, false
	}
	return c.s.livePR(c.r.Context(), baseGit, headGit, snap, number), baseGit, true
}

func (c *call) getPull() {
	lv, _, ok := c.livePull()
	if !ok {
		return
	}
	if accept := c.r.Header.Get("Accept"); strings.Contains(accept, "diff") {
		c.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		c.w.WriteHeader(http.StatusOK)
		_, _ = c.w.Write([]byte(lv.diff))
		return
	}
	c.locked(func() func() {
		r, is, f := c.pullLocked("read")
		if f != nil {
			return f
		}
		return c.jsonF(http.StatusOK, c.s.pullJSONLocked(c.base, r, is, lv))
	})
}

func (c *call) listReviews() {
	c.locked(func() func() {
		r, is, fail := c.pullLocked("read")
		if fail != nil {
			return fail
		}
		papi := fmt.Sprintf("%srepos/%s/pulls/%d", c.base, r.meta.FullName, is.number)
		return pageJSONF(c, is.pull.reviews, func(rv *review) any {
			html := fmt.Sprintf("%s%s/pull/%d#pullrequestreview-%d", c.base, r.meta.FullName, is.number, rv.id)
			return obj{
				"id": rv.id, "node_id": nodeID("PRR", rv.id), "user": c.s.simpleUserLocked(c.base, rv.author),
				"body": rv.body, "state": rv.state, "commit_id": rv.commitID, "html_url": html,
				"pull_request_url": papi, "submitted_at": ts(rv.submitted),
				"author_association": c.s.associationLocked(r, rv.author),
				"_links":             obj{"html": obj{"href": html}, "pull_request": obj{"href": papi}},
			}
		})
	})
}

func (c *call) listReviewComments() {
	c.locked(func() func() {
		r, is, fail := c.pullLocked("read")
		if fail != nil {
			return fail
		}
		papi := fmt.Sprintf("%srepos/%s/pulls/%d", c.base, r.meta.FullName, is.number)
		return pageJSONF(c, is.pull.rcomms, func(rc *reviewComment) any {
			api := fmt.Sprintf("%srepos/%s/pulls/comments/%d", c.base, r.meta.FullName, rc.id)
			html := fmt.Sprintf("%s%s/pull/%d#discussion_r%d", c.base, r.meta.FullName, is.number, rc.id)
			var rid any
			if rc.reviewID != 0 {
				rid = rc.reviewID
			}
			return obj{
				"url": api, "id": rc.id, "node_id": nodeID("PRRC", rc.id), "pull_request_review_id": rid,
				"diff_hunk": rc.diffHunk, "path": rc.path, "commit_id": rc.commitID, "original_commit_id": rc.commitID,
				"user": c.s.simpleUserLocked(c.base, rc.author), "body": rc.body,
				"created_at": ts(rc.created), "updated_at": ts(rc.created), "html_url": html, "pull_request_url": papi,
				"author_association": c.s.associationLocked(r, rc.author), "line": rc.line, "original_line": rc.line,
				"side": "RIGHT", "start_line": nil, "original_start_line": nil, "start_side": nil, "subject_type": "line",
				"reactions": c.s.reactionRollup(api+"/reactions", rc.reactions),
				"_links":    obj{"self": obj{"href": api}, "html": obj{"href": html}, "pull_request": obj{"href": papi}},
			}
		})
	})
}

type pullRequestBody struct {
	Title *string `json:"title"`
	Body  *string `json:"body"`
	Head  *string `json:"head"`
	Base  *string `json:"base"`
	Draft *bool   `json:"draft"`
}

func (c *call) createPull() {
	if !c.requireLogin() {
		return
	}
	var req pullRequestBody
	if !c.decode(&req) {
		return
	}
	if req.Title == nil || strings.TrimSpace(*req.Title) == "" {
		c.invalid("PullRequest", "title", "missing_field", "")
		return
	}
	if req.Head == nil || *req.Head == "" {
		c.invalid("PullRequest", "head", "missing_field", "")
		return
	}
	if req.Base == nil || *req.Base == "" {
		c.invalid("PullRequest", "base", "missing_field", "")
		return
	}
	if req.Body != nil && checkBody(*req.Body) != nil {
		c.tooLongF()()
		return
	}
	headOwner, headRef, forked := strings.Cut(*req.Head, ":")
	if !forked {
		headOwner, headRef = "", *req.Head
	}
	var baseGit, headGit *gitStore
	var baseFull, headFull string
	var fail func()
	c.locked(func() func() {
		r, f := c.repoLocked("read")
		if f != nil {
			fail = f
			return nil
		}
		baseGit, baseFull = r.git, r.meta.FullName
		headGit, headFull = r.git, r.meta.FullName
		if forked && !equalFold(headOwner, r.meta.Owner) {
			hr := c.s.forkOfLocked(r, headOwner)
			if hr == nil {
				fail = c.invalidF("PullRequest", "head", "invalid", "")
				return nil
			}
			headGit, headFull = hr.git, hr.meta.FullName
		}
		return nil
	})
	if fail != nil {
		fail()
		return
	}
	ctx := c.r.Context()
	baseSHA := baseGit.resolveRef(ctx, "refs/heads/"+*req.Base)
	if baseSHA == "" {
		c.invalid("PullRequest", "base", "invalid", "")
		return
	}
	headSHA := headGit.resolveRef(ctx, "refs/heads/"+headRef)
	if headSHA == "" {
		c.invalid("PullRequest", "head", "invalid", "")
		return
	}
	if headGit == baseGit {
		if baseGit.isAncestor(ctx, headSHA, baseSHA) {
			c.err(http.StatusUnprocessableEntity, "Validation Failed", []any{obj{"resource": "PullRequest", "code": "custom",
				"message": "No commits between " + *req.Base + " and " + *req.Head}})
			return
		}
	}
	var number int
	c.locked(func() func() {
		r, f := c.repoLocked("read")
		if f != nil {
			return f
		}
		for _, is := range r.issues {
			if is.pull != nil && is.state == "open" && equalFold(is.pull.headRepo, headFull) && is.pull.headRef == headRef && is.pull.baseRef == *req.Base {
				return func() {
					c.err(http.StatusUnprocessableEntity, "Validation Failed", []any{obj{"resource": "PullRequest", "code": "custom",
						"message": "A pull request already exists for " + strings.Split(headFull, "/")[0] + ":" + headRef + "."}})
				}
			}
		}
		p := &pull{headRepo: headFull, headRef: headRef, headSHA: headSHA, baseRef: *req.Base, baseSHA: baseSHA, draft: req.Draft != nil && *req.Draft}
		is := c.s.addIssueLocked(r, c.login, *req.Title, deref(req.Body), nil, p)
		number = is.number
		return nil
	})
	if number == 0 {
		return
	}
	// Keep the head commit reachable in the base repo, as GitHub's refs/pull/N/head.
	pullRef := fmt.Sprintf("refs/pull/%d/head", number)
	if headGit != baseGit {
		baseGit.copyReachable(ctx, headGit, headSHA)
	}
	baseGit.setRef(pullRef, headSHA)
	lv := c.s.livePR(ctx, baseGit, headGit, pull{headRepo: headFull, headRef: headRef, headSHA: headSHA, baseRef: *req.Base, baseSHA: baseSHA}, number)
	c.locked(func() func() {
		r := c.s.repos[lower(baseFull)]
		is := r.issues[number]
		c.w.Header().Set("Location", fmt.Sprintf("%srepos/%s/pulls/%d", c.base, baseFull, number))
		return c.jsonF(http.StatusCreated, c.s.pullJSONLocked(c.base, r, is, lv))
	})
}

// forkOfLocked finds owner's repository in r's fork network (its fork of r,
// or r's parent when owner owns it).
func (s *Sim) forkOfLocked(r *repoState, owner string) *repoState {
	for _, f := range r.forks {
		if fr := s.repos[lower(f)]; fr != nil && equalFold(fr.meta.Owner, owner) {
			return fr
		}
	}
	if r.meta.Parent != "" {
		if pr := s.repos[lower(r.meta.Parent)]; pr != nil && equalFold(pr.meta.Owner, owner) {
			return pr
		}
	}
	return nil
}
