package webhook

import (
	"errors"
	"fmt"
	"time"
)

// Trigger is the one item of a webhook delivery that may carry a mention: a
// comment, a review, or the body of a newly opened issue or pull request.
type Trigger struct {
	Event, Action string // e.g. "issue_comment", "created"

	Repo          string // "owner/name"
	RepoPrivate   bool
	RepoOwnerType string // "User" | "Organization"

	Number int // issue or pull request number
	IsPR   bool

	// CommentID is the id of the comment or review; 0 for issues/pull_request
	// opened, where the mention is in the issue or PR body itself.
	CommentID int64
	// NodeID is the node_id of the item that carries the mention: the jobid
	// is derived from it, so the same mention always maps to the same job.
	NodeID string

	Author     string
	AuthorType string // "User" | "Bot"
	AuthorID   int64  // GitHub's numeric user id (0 when unknown)

	Body string // "" when GitHub sends null (e.g. a review with no summary)
	URL  string // html_url of the triggering item

	CreatedAt time.Time
	// Edited is true when the body was changed after it was created (an
	// "edited" delivery, a "changes.body" record, or in poll mode an
	// updated_at after created_at); the dispatcher must not act on it.
	Edited bool
}

// ErrUnsupported marks deliveries that can never trigger a run (other events,
// other actions such as deleted); the caller answers 204.
var ErrUnsupported = errors.New("webhook event not handled")

// DecodeError says why a delivery of a handled event could not be decoded.
// Field is the JSON path of the offending field ("" for malformed JSON).
type DecodeError struct {
	Event string
	Field string
	Msg   string
	Err   error
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("decode %s webhook: %s", e.Event, e.Msg)
	}
	return fmt.Sprintf("decode %s webhook: field %q: %s", e.Event, e.Field, e.Msg)
}

func (e *DecodeError) Unwrap() error { return e.Err }
