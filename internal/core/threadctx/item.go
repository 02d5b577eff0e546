package threadctx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// kind says which list an item came from.
type kind int

const (
	kindComment kind = iota
	kindReview
	kindReviewComment
)

func (k kind) String() string {
	return [...]string{"comment", "review", "review comment"}[k]
}

// item is one comment, review or review comment: its raw bytes plus the few
// fields the builder reads.
type item struct {
	raw     json.RawMessage
	kind    kind
	index   int // position in its list
	id      int64
	nodeID  string
	at      time.Time // created_at, or submitted_at for reviews
	updated time.Time // zero when the object has no updated_at
}

// fields are what parseItem reads of an object.
type fields struct {
	ID          int64   `json:"id"`
	NodeID      string  `json:"node_id"`
	CreatedAt   *string `json:"created_at"`
	SubmittedAt *string `json:"submitted_at"`
	UpdatedAt   *string `json:"updated_at"`
	Body        *string `json:"body"`
	User        *struct {
		Login string `json:"login"`
	} `json:"user"`
}

func parseTime(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// compact returns raw without insignificant whitespace so that sizes add up
// exactly when the context is assembled.
func compact(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func parseItems(list []json.RawMessage, k kind) ([]item, error) {
	out := make([]item, 0, len(list))
	for i, raw := range list {
		c, err := compact(raw)
		if err != nil {
			return nil, fmt.Errorf("%s %d is not valid JSON: %w", k, i, err)
		}
		var f fields
		if err := json.Unmarshal(c, &f); err != nil {
			return nil, fmt.Errorf("%s %d is not a JSON object: %w", k, i, err)
		}
		at := parseTime(f.CreatedAt)
		if k == kindReview {
			at = parseTime(f.SubmittedAt)
		}
		out = append(out, item{raw: c, kind: k, index: i, id: f.ID, nodeID: f.NodeID, at: at, updated: parseTime(f.UpdatedAt)})
	}
	return out, nil
}

// Trigger is what the builder found of the trigger item, for the caller to
// check against what it decided on.
type Trigger struct {
	ID        int64
	NodeID    string
	Author    string
	Body      string
	CreatedAt time.Time
	Raw       json.RawMessage
}

func triggerOf(raw json.RawMessage, reviewTime bool) (Trigger, error) {
	var f fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return Trigger{}, fmt.Errorf("trigger is not a JSON object: %w", err)
	}
	t := Trigger{ID: f.ID, NodeID: f.NodeID, CreatedAt: parseTime(f.CreatedAt), Raw: raw}
	if reviewTime {
		t.CreatedAt = parseTime(f.SubmittedAt)
	}
	if f.Body != nil {
		t.Body = *f.Body
	}
	if f.User != nil {
		t.Author = f.User.Login
	}
	return t, nil
}
