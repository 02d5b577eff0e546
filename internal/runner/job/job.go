// Package job reads the facts of one job out of its trusted context: which
// thread, which comment triggered it, who wrote it, the task and the !cfg
// flags. The agent, the gate and the publish job all derive the policy from
// here, so they agree without trusting each other.
package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/mention"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

// Job is what the runner needs to know about the mention it serves.
type Job struct {
	JobID         string
	Repo          string // owner/name of the thread
	Number        int
	IsPR          bool
	TriggerID     int64
	TriggerNodeID string
	TriggerURL    string
	Author        string
	Body          string // the trigger comment's body, as written
	CreatedAt     time.Time
	Mention       mention.Mention
	Flags         policy.Flags
	Task          string
}

// ErrNoMention means the trigger comment does not mention the bot (the
// context was built for someone else, or tampered with).
var ErrNoMention = errors.New("the trigger comment does not mention the bot")

// raw mirrors the few fields of the GitHub API objects we read.
type raw struct {
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	PullRequest *struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Trigger *struct {
		ID        int64     `json:"id"`
		NodeID    string    `json:"node_id"`
		HTMLURL   string    `json:"html_url"`
		Body      *string   `json:"body"`
		CreatedAt time.Time `json:"created_at"`
		// reviews carry submitted_at instead of created_at
		SubmittedAt time.Time `json:"submitted_at"`
		User        *struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"trigger_comment"`
}

// FromContext parses the context JSON and the trigger's mention of bot.
// An invalid or stray !cfg is returned as the *policy.FlagError from
// policy.FromComment, so
// the caller can tell it apart from a broken context.
func FromContext(context []byte, bot string) (*Job, error) {
	var r raw
	if err := json.Unmarshal(context, &r); err != nil {
		return nil, fmt.Errorf("job: context is not a JSON object: %w", err)
	}
	var missing []string
	if r.Repository == nil || r.Repository.FullName == "" {
		missing = append(missing, "repository.full_name")
	}
	if r.Trigger == nil || r.Trigger.NodeID == "" || r.Trigger.Body == nil || r.Trigger.User == nil || r.Trigger.User.Login == "" {
		missing = append(missing, "trigger_comment (node_id, body, user.login)")
	}
	number, isPR := 0, false
	switch {
	case r.PullRequest != nil && r.PullRequest.Number > 0:
		number, isPR = r.PullRequest.Number, true
	case r.Issue != nil && r.Issue.Number > 0:
		number = r.Issue.Number
		isPR = len(r.Issue.PullRequest) > 0 && string(r.Issue.PullRequest) != "null"
	default:
		missing = append(missing, "issue.number or pull_request.number")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("job: context lacks %s", strings.Join(missing, ", "))
	}
	if !policy.ValidRepo(r.Repository.FullName) {
		return nil, fmt.Errorf("job: context repository %q is not a valid owner/name", r.Repository.FullName)
	}
	t := r.Trigger
	created := t.CreatedAt
	if created.IsZero() {
		created = t.SubmittedAt
	}
	j := &Job{
		JobID:         transport.JobID(t.NodeID),
		Repo:          r.Repository.FullName,
		Number:        number,
		IsPR:          isPR,
		TriggerID:     t.ID,
		TriggerNodeID: t.NodeID,
		TriggerURL:    t.HTMLURL,
		Author:        t.User.Login,
		Body:          *t.Body,
		CreatedAt:     created,
	}
	// The first mention decides, as the dispatcher did (policy.FromComment).
	m, found, f, err := policy.FromComment(j.Body, bot)
	if !found {
		return j, ErrNoMention
	}
	j.Mention = m
	j.Task = mention.Task(j.Body, j.Mention)
	if err != nil {
		return j, err
	}
	j.Flags = f
	return j, nil
}

// Thread is the trigger thread as the policy's "here".
func (j *Job) Thread() policy.Thread { return policy.Thread{Repo: j.Repo, Number: j.Number} }

// Policy is the effective policy of this job.
func (j *Job) Policy(c policy.Ceilings, b policy.Blocker) policy.Policy {
	return policy.Effective(j.Flags, c, j.Thread(), b)
}
