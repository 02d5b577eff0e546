package githubsim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// graphql answers the one GraphQL query mention-runner makes: the
// Comment interface's lastEditedAt for a list of node ids
// (`nodes(ids: $ids) { id ... on Comment { lastEditedAt } }`), because the
// REST API shows no trace of an edited review body and cannot tell an
// edited issue body from other activity. An id the caller cannot see, or
// that names nothing, is null, as on GitHub.
func (c *call) graphql() {
	if !c.requireLogin() {
		return
	}
	var req struct {
		Query     string `json:"query"`
		Variables struct {
			IDs []string `json:"ids"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(c.body, &req); err != nil || !strings.Contains(req.Query, "nodes(ids:") || !strings.Contains(req.Query, "lastEditedAt") {
		c.json(http.StatusOK, obj{"errors": []obj{{"message": "githubsim answers only nodes(ids:) { ... on Comment { lastEditedAt } }"}}})
		return
	}
	c.locked(func() func() {
		nodes := make([]any, 0, len(req.Variables.IDs))
		for _, id := range req.Variables.IDs {
			edited, ok := c.s.editedLocked(c.login, id)
			switch {
			case !ok:
				nodes = append(nodes, nil)
			case edited.IsZero():
				nodes = append(nodes, obj{"id": id, "lastEditedAt": nil})
			default:
				nodes = append(nodes, obj{"id": id, "lastEditedAt": edited.UTC().Format(time.RFC3339)})
			}
		}
		return c.jsonF(http.StatusOK, obj{"data": obj{"nodes": nodes}})
	})
}

// editedLocked finds the issue, pull request, comment, review or review
// comment with node id nodeID and returns its last body edit.
func (s *Sim) editedLocked(login, nodeID string) (time.Time, bool) {
	prefix, enc, ok := strings.Cut(nodeID, "_")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || !strings.HasPrefix(string(raw), "sim") {
		return time.Time{}, false
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(string(raw), "sim"), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	if prefix == "IC" {
		cm := s.comments[id]
		if cm == nil || !atLeast(s.permissionLocked(s.repos[cm.repo], login), "read") {
			return time.Time{}, false
		}
		return cm.edited, true
	}
	for _, r := range s.repos {
		if !atLeast(s.permissionLocked(r, login), "read") {
			continue
		}
		for _, is := range r.issues {
			switch {
			case prefix == "I" && is.id == id, prefix == "PR" && is.pull != nil && is.pull.id == id:
				return is.edited, true
			case is.pull == nil:
				continue
			}
			for _, rv := range is.pull.reviews {
				if prefix == "PRR" && rv.id == id {
					return rv.edited, true
				}
			}
			for _, rc := range is.pull.rcomms {
				if prefix == "PRRC" && rc.id == id {
					return time.Time{}, true // review comments are not edited in the simulator
				}
			}
		}
	}
	return time.Time{}, false
}

// EditReview changes a review's body, as `PUT
// /repos/{owner}/{repo}/pulls/{number}/reviews/{id}` does: the REST review
// object shows no trace of it, GraphQL's lastEditedAt does.
func (s *Sim) EditReview(repo string, number int, reviewID int64, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.issues[number] == nil || r.issues[number].pull == nil {
		return fmt.Errorf("githubsim: edit review: %s#%d is not a pull request", repo, number)
	}
	for _, rv := range r.issues[number].pull.reviews {
		if rv.id == reviewID {
			if rv.body != body {
				rv.body, rv.edited = body, s.now().UTC()
			}
			return nil
		}
	}
	return fmt.Errorf("githubsim: edit review: no review %d on %s#%d", reviewID, repo, number)
}
