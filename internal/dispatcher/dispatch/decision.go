package dispatch

import (
	"encoding/json"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

// Kinds of decision.
const (
	Dispatch = "dispatch"
	Ignore   = "ignore"
	Reply    = "reply"
	Block    = "block"
	Unblock  = "unblock"
)

// Trigger is one item that may carry a mention, from any mode. The embedded
// webhook.Trigger says what and where; the rest are API responses the mode
// already holds, reused to save requests.
type Trigger struct {
	webhook.Trigger
	// Repository is the raw repository object (webhook payload or
	// notification), reused as the context's "repository"; nil = fetch.
	Repository json.RawMessage

	pre       prefetched
	recheck   bool // seen by an earlier cycle's window: check the dedupe ref first
	threadKey string
}

// prefetched holds thread data the poller already listed.
type prefetched struct {
	issue, pull                     json.RawMessage
	comments, reviews, reviewComnts []json.RawMessage
}

// TriggerRef is the trigger as shown in a decision.
type TriggerRef struct {
	Repo      string `json:"repo"`
	Number    int    `json:"number"`
	CommentID int64  `json:"comment_id"`
	Author    string `json:"author"`
	URL       string `json:"url"`
}

// Decision is what Handle did (or, in a dry run, would do) with a trigger.
type Decision struct {
	Decision string         `json:"decision"`
	Reason   string         `json:"reason"`
	Trigger  TriggerRef     `json:"trigger"`
	JobID    string         `json:"jobid,omitempty"`
	Policy   *policy.Policy `json:"policy,omitempty"`
	// Dispatches is how many repository_dispatch events were sent.
	Dispatches int `json:"dispatches,omitempty"`
	// ReplySuppressed says why a reply the decision called for was not
	// posted (a reply budget spent, the repository blocked).
	ReplySuppressed string `json:"reply_suppressed,omitempty"`
}

func refOf(t *Trigger) TriggerRef {
	return TriggerRef{Repo: t.Repo, Number: t.Number, CommentID: t.CommentID, Author: t.Author, URL: t.URL}
}
