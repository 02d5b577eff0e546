package githubsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/prdiff"
)

// reviewRequest is POST /repos/{o}/{r}/pulls/{n}/reviews.
type reviewRequest struct {
	CommitID *string `json:"commit_id"`
	Body     *string `json:"body"`
	Event    *string `json:"event"`
	Comments []struct {
		Path      string `json:"path"`
		Position  *int   `json:"position"`
		Body      string `json:"body"`
		Line      *int   `json:"line"`
		Side      string `json:"side"`
		StartLine *int   `json:"start_line"`
		StartSide string `json:"start_side"`
	} `json:"comments"`
}

// createReview submits a review with its inline comments at once, as
// GitHub does for a review with an event: 422 for an event other than
// COMMENT, APPROVE or REQUEST_CHANGES, a COMMENT without a body, a
// commit the repository does not have, or a comment whose path or line
// the pull request's diff does not show ("Line could not be resolved").
// Inline comments are checked against the diff as git computes it at
// request time (or the fixed diff a test seeded).
func (c *call) createReview() {
	var req reviewRequest
	if !c.requireLogin() || !c.decode(&req) {
		return
	}
	lv, baseGit, ok := c.livePull()
	if !ok {
		return
	}
	ctx := c.r.Context()
	event := "PENDING"
	if req.Event != nil {
		event = *req.Event
	}
	body := ""
	if req.Body != nil {
		body = *req.Body
	}
	commit := lv.headSHA
	if req.CommitID != nil && *req.CommitID != "" {
		commit = *req.CommitID
		if commit != lv.headSHA && baseGit.objectType(ctx, commit) == "" {
			c.err(http.StatusUnprocessableEntity, "Unprocessable Entity", []any{"commit_id is not part of the pull request"})
			return
		}
	}
	var state string
	switch event {
	case "COMMENT":
		state = "COMMENTED"
		if strings.TrimSpace(body) == "" && len(req.Comments) == 0 {
			c.err(http.StatusUnprocessableEntity, "Unprocessable Entity", []any{"Body is required for a comment review"})
			return
		}
	case "APPROVE":
		state = "APPROVED"
	case "REQUEST_CHANGES":
		state = "CHANGES_REQUESTED"
	default:
		c.err(http.StatusUnprocessableEntity, "Unprocessable Entity", []any{"Event must be COMMENT, APPROVE or REQUEST_CHANGES"})
		return
	}
	if checkBody(body) != nil {
		c.tooLongF()()
		return
	}
	files := prdiff.Parse(lv.diff)
	for _, cm := range req.Comments {
		if cm.Line == nil || strings.TrimSpace(cm.Body) == "" || checkBody(cm.Body) != nil {
			c.err(http.StatusUnprocessableEntity, "Unprocessable Entity", []any{"Review comments need a path, a line and a body"})
			return
		}
		f := files.File(cm.Path)
		if f == nil {
			c.err(http.StatusUnprocessableEntity, "Unprocessable Entity", []any{"Path could not be resolved"})
			return
		}
		start := 0
		if cm.StartLine != nil {
			start = *cm.StartLine
		}
		if !simLineInDiff(f, *cm.Line, start, cm.Side, cm.StartSide) {
			c.err(http.StatusUnprocessableEntity, "Unprocessable Entity", []any{"Line could not be resolved"})
			return
		}
	}
	c.locked(func() func() {
		r, is, f := c.pullLocked("read")
		if f != nil {
			return f
		}
		now := c.s.now().UTC()
		rv := &review{id: c.s.newIDLocked(), author: c.login, state: state, body: body, commitID: commit, submitted: now}
		is.pull.reviews = append(is.pull.reviews, rv)
		for _, cm := range req.Comments {
			is.pull.rcomms = append(is.pull.rcomms, &reviewComment{id: c.s.newIDLocked(), reviewID: rv.id, author: c.login,
				path: cm.Path, line: *cm.Line, body: cm.Body, commitID: commit, created: now})
		}
		is.updated = now
		return c.jsonF(http.StatusOK, c.reviewJSONLocked(r, is, rv))
	})
}

// simLineInDiff is GitHub's rule: the line (and the range's first line)
// shown on that side by one hunk of the file's diff.
func simLineInDiff(f *prdiff.File, line, start int, side, startSide string) bool {
	if side == "" {
		side = prdiff.SideRight
	}
	if startSide == "" {
		startSide = side
	}
	in := func(h prdiff.Hunk, s string, n int) bool {
		if s == prdiff.SideLeft {
			return n >= h.OldStart && n <= h.OldEnd
		}
		return s == prdiff.SideRight && n >= h.NewStart && n <= h.NewEnd
	}
	for _, h := range f.Hunks {
		if in(h, side, line) && (start == 0 || in(h, startSide, start)) {
			return true
		}
	}
	return false
}

func (c *call) reviewJSONLocked(r *repoState, is *issue, rv *review) obj {
	papi := fmt.Sprintf("%srepos/%s/pulls/%d", c.base, r.meta.FullName, is.number)
	html := fmt.Sprintf("%s%s/pull/%d#pullrequestreview-%d", c.base, r.meta.FullName, is.number, rv.id)
	return obj{
		"id": rv.id, "node_id": nodeID("PRR", rv.id), "user": c.s.simpleUserLocked(c.base, rv.author),
		"body": rv.body, "state": rv.state, "commit_id": rv.commitID, "html_url": html,
		"pull_request_url": papi, "submitted_at": ts(rv.submitted),
		"author_association": c.s.associationLocked(r, rv.author),
		"_links":             obj{"html": obj{"href": html}, "pull_request": obj{"href": papi}},
	}
}

// listRepoLabels serves GET /repos/{o}/{r}/labels, in creation order.
func (c *call) listRepoLabels() {
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		return pageJSONF(c, r.labelOrder, func(n string) any { return c.s.labelLocked(c.base, r, n) })
	})
}

// CreateLabel adds a label to a repository (test setup).
func (s *Sim) CreateLabel(repo, name, color string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return fmt.Errorf("githubsim: create label: repo %s does not exist", repo)
	}
	s.ensureLabelsLocked(r, []string{name})
	if color != "" {
		r.labels[lower(name)].color = color
	}
	return nil
}

// IssueLabels returns the labels on an issue or pull request, in order.
func (s *Sim) IssueLabels(repo string, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.issues[number] == nil {
		return nil
	}
	return append([]string(nil), r.issues[number].labels...)
}

// RepoLabels returns a repository's label names, in creation order.
func (s *Sim) RepoLabels(repo string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.labelOrder))
	for _, k := range r.labelOrder {
		out = append(out, r.labels[k].name)
	}
	return out
}

// DeleteRepoLabel deletes a repository's label as a maintainer would,
// taking it off every issue that has it.
func (s *Sim) DeleteRepoLabel(repo, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.labels[lower(name)] == nil {
		return
	}
	delete(r.labels, lower(name))
	r.labelOrder = slices.DeleteFunc(r.labelOrder, func(k string) bool { return k == lower(name) })
	for _, is := range r.issues {
		is.labels = slices.DeleteFunc(is.labels, func(l string) bool { return lower(l) == lower(name) })
	}
}

// ReviewSummary is one review as a test sees it.
type ReviewSummary struct {
	ID       int64
	Author   string
	State    string
	Body     string
	CommitID string
	Comments []ReviewCommentSummary
}

// ReviewCommentSummary is one inline comment of a review.
type ReviewCommentSummary struct {
	Path string
	Line int
	Body string
}

// Reviews returns a pull request's reviews with their inline comments.
func (s *Sim) Reviews(repo string, number int) []ReviewSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.issues[number] == nil || r.issues[number].pull == nil {
		return nil
	}
	p := r.issues[number].pull
	var out []ReviewSummary
	for _, rv := range p.reviews {
		rs := ReviewSummary{ID: rv.id, Author: rv.author, State: rv.state, Body: rv.body, CommitID: rv.commitID}
		for _, rc := range p.rcomms {
			if rc.reviewID == rv.id {
				rs.Comments = append(rs.Comments, ReviewCommentSummary{Path: rc.path, Line: rc.line, Body: rc.body})
			}
		}
		out = append(out, rs)
	}
	return out
}

// AddIssueLabels puts labels on an issue or pull request (test setup),
// creating missing ones as GitHub does.
func (s *Sim) AddIssueLabels(repo string, number int, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.issues[number] == nil {
		return
	}
	is := r.issues[number]
	is.labels = s.ensureLabelsLocked(r, append(append([]string{}, is.labels...), names...))
}
