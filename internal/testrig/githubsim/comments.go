package githubsim

import (
	"net/http"
	"strconv"
	"strings"
)

var reactionKinds = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

func (c *call) listComments() {
	since, ok := c.timeQuery("since")
	if !ok {
		return
	}
	c.locked(func() func() {
		r, is, fail := c.issueLocked("read")
		if fail != nil {
			return fail
		}
		var list []*comment
		for _, id := range is.comments {
			if cm := c.s.comments[id]; cm != nil && (since.IsZero() || !cm.updated.Before(since)) {
				list = append(list, cm)
			}
		}
		return pageJSONF(c, list, func(cm *comment) any { return c.s.commentLocked(c.base, r, cm) })
	})
}

type commentRequest struct {
	Body *string `json:"body"`
}

func (c *call) createComment() {
	var req commentRequest
	if !c.requireLogin() || !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		r, is, fail := c.issueLocked("read")
		if fail != nil {
			return fail
		}
		if req.Body == nil || strings.TrimSpace(*req.Body) == "" {
			return c.invalidF("IssueComment", "body", "missing_field", "")
		}
		if checkBody(*req.Body) != nil {
			return c.tooLongF()
		}
		cm := c.s.addCommentLocked(r, is, c.login, *req.Body)
		c.w.Header().Set("Location", c.base+"repos/"+r.meta.FullName+"/issues/comments/"+strconv.FormatInt(cm.id, 10))
		return c.jsonF(http.StatusCreated, c.s.commentLocked(c.base, r, cm))
	})
}

// commentLocked finds the comment in the path within a readable repository.
func (c *call) commentLocked(need string) (*repoState, *comment, func()) {
	r, fail := c.repoLocked(need)
	if fail != nil {
		return nil, nil, fail
	}
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	cm := c.s.comments[id]
	if err != nil || cm == nil || cm.repo != lower(r.meta.FullName) {
		return nil, nil, c.notFoundF()
	}
	return r, cm, nil
}

func (c *call) getComment() {
	c.locked(func() func() {
		r, cm, fail := c.commentLocked("read")
		if fail != nil {
			return fail
		}
		return c.jsonF(http.StatusOK, c.s.commentLocked(c.base, r, cm))
	})
}

// ownCommentLocked is the comment the caller may edit or delete: its
// author or someone with write access may.
func (c *call) ownCommentLocked() (*repoState, *comment, func()) {
	r, cm, fail := c.commentLocked("read")
	if fail != nil {
		return nil, nil, fail
	}
	if c.login == "" || !strings.EqualFold(c.login, cm.author) && !atLeast(c.s.permissionLocked(r, c.login), "write") {
		return nil, nil, c.errF(http.StatusForbidden, "Resource not accessible by personal access token")
	}
	return r, cm, nil
}

func (c *call) editComment() {
	var req commentRequest
	if !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		r, cm, fail := c.ownCommentLocked()
		if fail != nil {
			return fail
		}
		if req.Body == nil {
			return c.invalidF("IssueComment", "body", "missing_field", "")
		}
		if checkBody(*req.Body) != nil {
			return c.tooLongF()
		}
		if *req.Body != cm.body {
			cm.edited = c.s.now().UTC()
		}
		cm.body, cm.updated = *req.Body, c.s.now().UTC()
		return c.jsonF(http.StatusOK, c.s.commentLocked(c.base, r, cm))
	})
}

func (c *call) deleteComment() {
	c.locked(func() func() {
		r, cm, fail := c.ownCommentLocked()
		if fail != nil {
			return fail
		}
		delete(c.s.comments, cm.id)
		if is := r.issues[cm.number]; is != nil {
			for i, id := range is.comments {
				if id == cm.id {
					is.comments = append(is.comments[:i:i], is.comments[i+1:]...)
					break
				}
			}
		}
		return func() { c.noContent(http.StatusNoContent) }
	})
}

type reactionRequest struct {
	Content string `json:"content"`
}

// react adds a reaction to list: 201 when new, 200 with the existing one.
func (c *call) react(list *[]*reaction, content string) func() {
	valid := false
	for _, k := range reactionKinds {
		valid = valid || k == content
	}
	if !valid {
		return c.invalidF("Reaction", "content", "invalid", "content must be one of "+strings.Join(reactionKinds, ", "))
	}
	for _, rc := range *list {
		if strings.EqualFold(rc.user, c.login) && rc.content == content {
			return c.jsonF(http.StatusOK, c.s.reactionLocked(c.base, rc))
		}
	}
	rc := &reaction{id: c.s.newIDLocked(), user: c.login, content: content, created: c.s.now().UTC()}
	*list = append(*list, rc)
	return c.jsonF(http.StatusCreated, c.s.reactionLocked(c.base, rc))
}

func (c *call) listReactions(list []*reaction) func() {
	want := c.query("content")
	var sel []*reaction
	for _, rc := range list {
		if want == "" || rc.content == want {
			sel = append(sel, rc)
		}
	}
	return pageJSONF(c, sel, func(rc *reaction) any { return c.s.reactionLocked(c.base, rc) })
}

func (c *call) createCommentReaction() { c.createReaction(c.commentReactionsLocked) }
func (c *call) listCommentReactions()  { c.listReactionsOf(c.commentReactionsLocked) }
func (c *call) createIssueReaction()   { c.createReaction(c.issueReactionsLocked) }
func (c *call) listIssueReactions()    { c.listReactionsOf(c.issueReactionsLocked) }

// reactionsLocked finds the reaction list a route names, or the failure
// response; the caller holds the lock.
type reactionsLocked func() (*[]*reaction, func())

func (c *call) commentReactionsLocked() (*[]*reaction, func()) {
	_, cm, fail := c.commentLocked("read")
	if fail != nil {
		return nil, fail
	}
	return &cm.reactions, nil
}

func (c *call) issueReactionsLocked() (*[]*reaction, func()) {
	_, is, fail := c.issueLocked("read")
	if fail != nil {
		return nil, fail
	}
	return &is.reactions, nil
}

func (c *call) createReaction(find reactionsLocked) {
	var req reactionRequest
	if !c.requireLogin() || !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		list, fail := find()
		if fail != nil {
			return fail
		}
		return c.react(list, req.Content)
	})
}

func (c *call) listReactionsOf(find reactionsLocked) {
	c.locked(func() func() {
		list, fail := find()
		if fail != nil {
			return fail
		}
		return c.listReactions(*list)
	})
}

func (c *call) requireLogin() bool {
	if c.login == "" {
		c.err(http.StatusUnauthorized, "Requires authentication", nil)
		return false
	}
	return true
}
