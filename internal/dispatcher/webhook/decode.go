package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// handled maps each event we act on to the one action that can carry a new
// mention. Deletions are not handled; edits ("edited", every event) are
// decoded with Edited set so the dispatcher records why it ignored them:
// edits never trigger (SPEC §2).
var handled = map[string]string{
	"issue_comment":               "created",
	"issues":                      "opened",
	"pull_request":                "opened",
	"pull_request_review":         "submitted",
	"pull_request_review_comment": "created",
}

// The payload shapes below hold only what Decode reads. Pointers tell a
// missing field from a zero one; RawMessage tells a null body from a missing one.
const actionEdited = "edited"

type payload struct {
	Action      *string     `json:"action"`
	Repository  *repository `json:"repository"`
	Issue       *item       `json:"issue"`
	PullRequest *item       `json:"pull_request"`
	Comment     *item       `json:"comment"`
	Review      *item       `json:"review"`
	Changes     *struct {
		Body json.RawMessage `json:"body"`
	} `json:"changes"`
}

type repository struct {
	FullName *string `json:"full_name"`
	Private  *bool   `json:"private"`
	Owner    *user   `json:"owner"`
}

type user struct {
	Login *string `json:"login"`
	Type  *string `json:"type"`
	ID    int64   `json:"id"`
}

type item struct {
	ID          *int64          `json:"id"`
	NodeID      *string         `json:"node_id"`
	Number      *int            `json:"number"`
	User        *user           `json:"user"`
	Body        json.RawMessage `json:"body"`
	HTMLURL     *string         `json:"html_url"`
	CreatedAt   *string         `json:"created_at"`
	SubmittedAt *string         `json:"submitted_at"`
	PullRequest json.RawMessage `json:"pull_request"` // on an issue: present iff it is a PR
}

// Decode turns a webhook delivery (the X-GitHub-Event header and the raw
// body) into a Trigger. Events and actions that cannot carry a new mention
// return an error wrapping ErrUnsupported; a handled delivery that is
// malformed or lacks a field we need returns a *DecodeError naming it.
func Decode(event string, body []byte) (*Trigger, error) {
	action, ok := handled[event]
	if !ok {
		return nil, fmt.Errorf("%w: event %q", ErrUnsupported, event)
	}
	var p payload
	if err := unmarshal(event, body, &p); err != nil {
		// A delivery we ignore is never rejected for the shape of fields we
		// would not read: look at the action alone before reporting.
		var head struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(body, &head) == nil && head.Action != "" && head.Action != action && head.Action != actionEdited {
			return nil, fmt.Errorf("%w: %s action %q", ErrUnsupported, event, head.Action)
		}
		return nil, err
	}
	if p.Action == nil {
		return nil, missing(event, "action")
	}
	if *p.Action != action && *p.Action != actionEdited {
		return nil, fmt.Errorf("%w: %s action %q", ErrUnsupported, event, *p.Action)
	}
	d := decoder{event: event}
	t := &Trigger{Event: event, Action: *p.Action}
	d.repository(t, p.Repository)
	switch event {
	case "issue_comment":
		d.number(t, "issue", p.Issue)
		t.IsPR = p.Issue != nil && present(p.Issue.PullRequest)
		d.item(t, "comment", p.Comment, true, "created_at")
	case "issues":
		d.number(t, "issue", p.Issue)
		d.item(t, "issue", p.Issue, false, "created_at")
	case "pull_request":
		d.number(t, "pull_request", p.PullRequest)
		t.IsPR = true
		d.item(t, "pull_request", p.PullRequest, false, "created_at")
	case "pull_request_review":
		d.number(t, "pull_request", p.PullRequest)
		t.IsPR = true
		d.item(t, "review", p.Review, true, "submitted_at")
	case "pull_request_review_comment":
		d.number(t, "pull_request", p.PullRequest)
		t.IsPR = true
		d.item(t, "comment", p.Comment, true, "created_at")
	}
	if d.err != nil {
		return nil, d.err
	}
	if *p.Action == actionEdited || p.Changes != nil && present(p.Changes.Body) {
		t.Edited = true
	}
	return t, nil
}

func unmarshal(event string, body []byte, v any) error {
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return &DecodeError{Event: event, Msg: fmt.Sprintf("body is a JSON %s, want an object", typeErr.Value), Err: err}
		}
		return &DecodeError{Event: event, Field: typeErr.Field, Msg: fmt.Sprintf("is a JSON %s, want %s", typeErr.Value, jsonKind(typeErr.Type.String())), Err: err}
	}
	return &DecodeError{Event: event, Msg: "malformed JSON: " + err.Error(), Err: err}
}

// jsonKind names a Go target type the way a person reading JSON thinks of it.
func jsonKind(goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	default:
		return "an object"
	}
}

func missing(event, field string) error {
	return &DecodeError{Event: event, Field: field, Msg: "is missing"}
}

// present reports whether a raw field exists and is not JSON null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// decoder keeps the first error so the field checks read straight down.
type decoder struct {
	event string
	err   error
}

func (d *decoder) fail(field, msg string) {
	if d.err == nil {
		d.err = &DecodeError{Event: d.event, Field: field, Msg: msg}
	}
}

func (d *decoder) str(field string, p *string) string {
	if p == nil {
		d.fail(field, "is missing")
		return ""
	}
	if *p == "" {
		d.fail(field, "is empty")
	}
	return *p
}

func (d *decoder) repository(t *Trigger, r *repository) {
	if r == nil {
		d.fail("repository", "is missing")
		return
	}
	t.Repo = d.str("repository.full_name", r.FullName)
	if owner, name, ok := strings.Cut(t.Repo, "/"); t.Repo != "" && (!ok || owner == "" || name == "" || strings.Contains(name, "/")) {
		d.fail("repository.full_name", fmt.Sprintf("%q is not owner/name", t.Repo))
	}
	if r.Private == nil {
		d.fail("repository.private", "is missing")
	} else {
		t.RepoPrivate = *r.Private
	}
	if r.Owner == nil {
		d.fail("repository.owner", "is missing")
		return
	}
	t.RepoOwnerType = d.str("repository.owner.type", r.Owner.Type)
}

func (d *decoder) number(t *Trigger, key string, it *item) {
	if it == nil {
		d.fail(key, "is missing")
		return
	}
	if it.Number == nil {
		d.fail(key+".number", "is missing")
		return
	}
	if *it.Number <= 0 {
		d.fail(key+".number", fmt.Sprintf("%d is not a positive issue number", *it.Number))
		return
	}
	t.Number = *it.Number
}

// item fills the fields of the triggering item. withID is set for comments
// and reviews, whose own id becomes CommentID.
func (d *decoder) item(t *Trigger, key string, it *item, withID bool, timeField string) {
	if it == nil {
		d.fail(key, "is missing")
		return
	}
	if withID {
		switch {
		case it.ID == nil:
			d.fail(key+".id", "is missing")
		case *it.ID <= 0:
			d.fail(key+".id", fmt.Sprintf("%d is not a positive id", *it.ID))
		default:
			t.CommentID = *it.ID
		}
	}
	t.NodeID = d.str(key+".node_id", it.NodeID)
	if it.User == nil {
		d.fail(key+".user", "is missing")
	} else {
		t.Author = d.str(key+".user.login", it.User.Login)
		t.AuthorType = d.str(key+".user.type", it.User.Type)
		t.AuthorID = it.User.ID
	}
	t.Body = d.body(key+".body", it.Body)
	t.URL = d.str(key+".html_url", it.HTMLURL)
	ts := it.CreatedAt
	if timeField == "submitted_at" {
		ts = it.SubmittedAt
	}
	if s := d.str(key+"."+timeField, ts); s != "" {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			d.fail(key+"."+timeField, fmt.Sprintf("%q is not an RFC 3339 time", s))
		}
		t.CreatedAt = at.UTC()
	}
}

// body accepts a string or null (GitHub sends null for an empty issue, PR or
// review body); a missing key means the payload is not what we think it is.
func (d *decoder) body(field string, raw json.RawMessage) string {
	if len(raw) == 0 {
		d.fail(field, "is missing")
		return ""
	}
	if !present(raw) {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.fail(field, "is not a string or null")
		return ""
	}
	return s
}
