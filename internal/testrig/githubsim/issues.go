package githubsim

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

func (c *call) tooLongF() func() {
	return func() {
		c.err(http.StatusUnprocessableEntity, "Validation Failed", []any{obj{
			"resource": "IssueComment", "code": "custom", "field": "body",
			"message": "Body is too long (maximum is 65536 characters)",
		}})
	}
}

// issueLocked finds the issue in the path of a readable repository.
func (c *call) issueLocked(need string) (*repoState, *issue, func()) {
	r, fail := c.repoLocked(need)
	if fail != nil {
		return nil, nil, fail
	}
	n, ok := atoiPos(c.params["number"])
	if !ok || r.issues[n] == nil {
		return nil, nil, c.notFoundF()
	}
	return r, r.issues[n], nil
}

func (c *call) getIssue() {
	c.locked(func() func() {
		r, is, fail := c.issueLocked("read")
		if fail != nil {
			return fail
		}
		return c.jsonF(http.StatusOK, c.s.issueLocked(c.base, r, is))
	})
}

func (c *call) listIssues() {
	q := c.r.URL.Query()
	since, ok := c.timeQuery("since")
	if !ok {
		return
	}
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		var want []string
		if l := q.Get("labels"); l != "" {
			want = strings.Split(l, ",")
		}
		var list []*issue
		for _, is := range r.issues {
			if state != "all" && is.state != state {
				continue
			}
			if cr := q.Get("creator"); cr != "" && !strings.EqualFold(cr, is.author) {
				continue
			}
			if !since.IsZero() && is.updated.Before(since) {
				continue
			}
			if !hasLabels(is.labels, want) {
				continue
			}
			list = append(list, is)
		}
		key := func(is *issue) time.Time { return is.created }
		if q.Get("sort") == "updated" {
			key = func(is *issue) time.Time { return is.updated }
		}
		asc := q.Get("direction") == "asc"
		sort.Slice(list, func(i, j int) bool {
			if q.Get("sort") == "comments" && len(list[i].comments) != len(list[j].comments) {
				return (len(list[i].comments) < len(list[j].comments)) == asc
			}
			ki, kj := key(list[i]), key(list[j])
			if ki.Equal(kj) {
				return (list[i].number < list[j].number) == asc
			}
			return ki.Before(kj) == asc
		})
		return pageJSONF(c, list, func(is *issue) any { return c.s.issueLocked(c.base, r, is) })
	})
}

func hasLabels(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if strings.EqualFold(strings.TrimSpace(w), h) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

type issueRequest struct {
	Title       *string `json:"title"`
	Body        *string `json:"body"`
	State       *string `json:"state"`
	StateReason *string `json:"state_reason"`
	Labels      *[]any  `json:"labels"`
}

// labelNames accepts labels as names or {"name": …} objects.
func labelNames(in []any) []string {
	var out []string
	for _, v := range in {
		switch l := v.(type) {
		case string:
			out = append(out, l)
		case map[string]any:
			if n, ok := l["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func (c *call) createIssue() {
	var req issueRequest
	if !c.requireLogin() || !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		if req.Title == nil || strings.TrimSpace(*req.Title) == "" {
			return c.invalidF("Issue", "title", "missing_field", "")
		}
		body := deref(req.Body)
		if checkBody(body) != nil {
			return c.tooLongF()
		}
		var labels []string
		// GitHub silently drops labels from callers without push access.
		if req.Labels != nil && atLeast(c.s.permissionLocked(r, c.login), "triage") {
			labels = c.s.ensureLabelsLocked(r, labelNames(*req.Labels))
		}
		is := c.s.addIssueLocked(r, c.login, *req.Title, body, labels, nil)
		c.w.Header().Set("Location", c.base+c.s.issueAPIPath(r, is))
		return c.jsonF(http.StatusCreated, c.s.issueLocked(c.base, r, is))
	})
}

func (c *call) editIssue() {
	var req issueRequest
	if !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		r, is, fail := c.issueLocked("read")
		if fail != nil {
			return fail
		}
		perm := c.s.permissionLocked(r, c.login)
		if c.login == "" || (!atLeast(perm, "triage") && !strings.EqualFold(c.login, is.author)) {
			return c.errF(http.StatusForbidden, "Resource not accessible by personal access token")
		}
		if req.Body != nil && checkBody(*req.Body) != nil {
			return c.tooLongF()
		}
		if req.State != nil && *req.State != "open" && *req.State != "closed" {
			return c.invalidF("Issue", "state", "invalid", "state must be open or closed")
		}
		if req.StateReason != nil {
			switch *req.StateReason {
			case "completed", "not_planned", "reopened":
			default:
				return c.invalidF("Issue", "state_reason", "invalid", "state_reason must be completed, not_planned or reopened")
			}
		}
		now := c.s.now().UTC()
		if req.Title != nil {
			is.title = *req.Title
		}
		if req.Body != nil {
			if *req.Body != is.body {
				is.edited = now
			}
			is.body = *req.Body
		}
		if req.State != nil && *req.State != is.state {
			is.state = *req.State
			if is.state == "closed" {
				is.closed, is.stateReason = now, "completed"
			} else {
				is.closed, is.stateReason = time.Time{}, "reopened"
			}
		}
		if req.StateReason != nil && is.state == "closed" {
			is.stateReason = *req.StateReason
		}
		if req.Labels != nil && atLeast(perm, "triage") {
			is.labels = c.s.ensureLabelsLocked(r, labelNames(*req.Labels))
		}
		is.updated = now
		return c.jsonF(http.StatusOK, c.s.issueLocked(c.base, r, is))
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func atoiPos(v string) (int, bool) {
	n := 0
	if v == "" || len(v) > 9 {
		return 0, false
	}
	for _, ch := range v {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	return n, n > 0
}
