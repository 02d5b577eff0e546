package githubsim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// ensureLabelsLocked creates missing labels (as GitHub does when an issue is
// labelled with a new name) and returns the names as stored.
func (s *Sim) ensureLabelsLocked(r *repoState, names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[lower(n)] {
			continue
		}
		seen[lower(n)] = true
		l := r.labels[lower(n)]
		if l == nil {
			l = &label{id: s.newIDLocked(), name: n, color: "ededed"}
			r.labels[lower(n)] = l
			r.labelOrder = append(r.labelOrder, lower(n))
		}
		out = append(out, l.name)
	}
	return out
}

func (c *call) labelsJSONLocked(r *repoState, names []string) []any {
	out := make([]any, 0, len(names))
	for _, n := range names {
		out = append(out, c.s.labelLocked(c.base, r, n))
	}
	return out
}

func (c *call) listIssueLabels() {
	c.locked(func() func() {
		r, is, fail := c.issueLocked("read")
		if fail != nil {
			return fail
		}
		lo, hi := c.page(len(is.labels))
		return c.jsonF(http.StatusOK, c.labelsJSONLocked(r, is.labels[lo:hi]))
	})
}

func (c *call) addIssueLabels() {
	var names []string
	var wrapped struct {
		Labels []any `json:"labels"`
	}
	var plain []any
	if err := json.Unmarshal(c.body, &plain); err == nil {
		names = labelNames(plain)
	} else if err := json.Unmarshal(c.body, &wrapped); err == nil {
		names = labelNames(wrapped.Labels)
	} else {
		c.err(http.StatusBadRequest, "Problems parsing JSON", nil)
		return
	}
	c.locked(func() func() {
		r, is, fail := c.issueLocked("triage")
		if fail != nil {
			return fail
		}
		is.labels = c.s.ensureLabelsLocked(r, append(append([]string{}, is.labels...), names...))
		is.updated = c.s.now().UTC()
		return c.jsonF(http.StatusOK, c.labelsJSONLocked(r, is.labels))
	})
}

func (c *call) removeIssueLabel() {
	c.locked(func() func() {
		r, is, fail := c.issueLocked("triage")
		if fail != nil {
			return fail
		}
		name := c.params["name"]
		for i, l := range is.labels {
			if strings.EqualFold(l, name) {
				is.labels = append(is.labels[:i:i], is.labels[i+1:]...)
				is.updated = c.s.now().UTC()
				return c.jsonF(http.StatusOK, c.labelsJSONLocked(r, is.labels))
			}
		}
		return c.errF(http.StatusNotFound, "Label does not exist")
	})
}

func (c *call) createLabel() {
	var req struct {
		Name        string `json:"name"`
		Color       string `json:"color"`
		Description string `json:"description"`
	}
	if !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		r, fail := c.repoLocked("write")
		if fail != nil {
			return fail
		}
		name := strings.TrimSpace(req.Name)
		if name == "" {
			return c.invalidF("Label", "name", "missing_field", "")
		}
		if r.labels[lower(name)] != nil {
			return c.invalidF("Label", "name", "already_exists", "")
		}
		color := strings.TrimPrefix(req.Color, "#")
		if color == "" {
			color = "ededed"
		}
		l := &label{id: c.s.newIDLocked(), name: name, color: color, description: req.Description}
		r.labels[lower(name)] = l
		r.labelOrder = append(r.labelOrder, lower(name))
		return c.jsonF(http.StatusCreated, c.s.labelLocked(c.base, r, name))
	})
}

func (c *call) getLabel() {
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		if r.labels[lower(c.params["name"])] == nil {
			return c.notFoundF()
		}
		return c.jsonF(http.StatusOK, c.s.labelLocked(c.base, r, c.params["name"]))
	})
}
