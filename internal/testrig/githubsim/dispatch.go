package githubsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// Dispatch limits. GitHub documents "64 KB"; the simulator rejects request
// bodies of 65,536 bytes or more.
const (
	maxDispatchBody       = 65535
	maxDispatchEventType  = 100
	maxClientPayloadProps = 10
)

func (c *call) createDispatch() {
	if !c.requireLogin() {
		return
	}
	var fail func()
	var repo string
	c.locked(func() func() {
		r, f := c.repoLocked("write")
		if f != nil {
			fail = f
			return nil
		}
		repo = r.meta.FullName
		return nil
	})
	if fail != nil {
		fail()
		return
	}
	if len(c.body) > maxDispatchBody {
		c.invalid("RepositoryDispatch", "body", "custom", fmt.Sprintf("request body is %d bytes; the maximum is %d", len(c.body), maxDispatchBody))
		return
	}
	var req struct {
		EventType     *string         `json:"event_type"`
		ClientPayload json.RawMessage `json:"client_payload"`
	}
	if !c.decode(&req) {
		return
	}
	if req.EventType == nil || *req.EventType == "" {
		c.invalid("RepositoryDispatch", "event_type", "missing_field", "event_type is required")
		return
	}
	if n := utf8.RuneCountInString(*req.EventType); n > maxDispatchEventType {
		c.invalid("RepositoryDispatch", "event_type", "invalid", fmt.Sprintf("event_type is %d characters; the maximum is %d", n, maxDispatchEventType))
		return
	}
	if p := bytes.TrimSpace(req.ClientPayload); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(p, &props); err != nil {
			c.invalid("RepositoryDispatch", "client_payload", "invalid", "client_payload must be an object")
			return
		}
		if len(props) > maxClientPayloadProps {
			c.invalid("RepositoryDispatch", "client_payload", "invalid", fmt.Sprintf("client_payload has %d top-level properties; the maximum is %d", len(props), maxClientPayloadProps))
			return
		}
	}
	d := Dispatch{EventType: *req.EventType, ClientPayload: append(json.RawMessage(nil), req.ClientPayload...),
		Body: append([]byte(nil), c.body...), At: c.s.now().UTC()}
	c.s.mu.Lock()
	if r := c.s.repos[lower(repo)]; r != nil {
		r.dispatches = append(r.dispatches, d)
	}
	hooks := append([]func(string, Dispatch){}, c.s.hooks...)
	c.s.mu.Unlock()
	for _, h := range hooks {
		h(repo, d)
	}
	c.noContent(http.StatusNoContent)
}
