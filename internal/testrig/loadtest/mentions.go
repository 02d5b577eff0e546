package loadtest

import (
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

// Mention is one seeded mention and the trigger a webhook would carry.
type Mention struct {
	Repo    string
	Number  int
	IsPR    bool
	Trigger webhook.Trigger
	JobID   string
	// Payload is the issue_comment webhook delivery GitHub would send.
	Payload []byte
	// DiffPath is the file a pull request's diff changes (line 1 on the
	// right is in it); "" for an issue.
	DiffPath string
}

// DiffPath is the file every seeded pull request's diff changes.
const DiffPath = "change.txt"

// SeedMentions opens n threads round-robin over the repos (every prEvery-th
// one a pull request; 0 = none) and posts one mention on each, by a user
// of its own so no per-user limit applies.
func (w *World) SeedMentions(n, prEvery int) ([]Mention, error) {
	var out []Mention
	first := w.seeded
	w.seeded += n
	for i := first; i < first+n; i++ {
		repo := w.Repos[i%len(w.Repos)]
		user := fmt.Sprintf("user%04d", i)
		w.Sim.AddUser(user)
		isPR := prEvery > 0 && i%prEvery == prEvery-1
		var num int
		var err error
		if isPR {
			// one path for every pull request: the simulator serves a
			// seeded diff by head sha, and these heads are all main's tip
			diff := fmt.Sprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-old\n+new %d\n", DiffPath, DiffPath, DiffPath, DiffPath, i)
			num, err = w.Sim.CreatePR(repo, user, fmt.Sprintf("change %d", i), "a change", fmt.Sprintf("feature-%d", i), "main", diff)
		} else {
			num, err = w.Sim.CreateIssue(repo, user, fmt.Sprintf("bug %d", i), "it breaks")
		}
		if err != nil {
			return nil, fmt.Errorf("seed thread %d: %w", i, err)
		}
		_, _ = w.Sim.Comment(repo, num, "ops", "I can reproduce this.")
		w.Sim.AddIssueLabels(repo, num, TriageLabel)
		if w.PadEvery > 0 && i%w.PadEvery == w.PadEvery-1 {
			// a log paste in three comments (each under GitHub's 65,536
			// characters, or it would be refused): the context goes out as
			// agent_shard events
			for part := 0; part < 3; part++ {
				if _, err := w.Sim.Comment(repo, num, "ops", "```\n"+strings.Repeat(fmt.Sprintf("line %d.%d of the log\n", i, part), 2000)+"```"); err != nil {
					return nil, fmt.Errorf("seed log paste %d: %w", i, err)
				}
			}
		}
		m, err := w.MentionOn(repo, num, isPR, user, fmt.Sprintf("@%s !cfg comment-limit=%d\nplease look at this (%d)", Bot, QueuedComments+1, i))
		if err != nil {
			return nil, fmt.Errorf("seed mention %d: %w", i, err)
		}
		if isPR {
			m.DiffPath = DiffPath
		}
		w.Clock.Advance(100 * 1e6) // 100 ms between mentions
		out = append(out, m)
	}
	return out, nil
}

// MentionOn posts a comment by user on an existing thread and returns it
// as a Mention.
func (w *World) MentionOn(repo string, num int, isPR bool, user, body string) (Mention, error) {
	c, err := w.Sim.Comment(repo, num, user, body)
	if err != nil {
		return Mention{}, err
	}
	payload, err := w.Sim.CommentEvent(repo, c.GetID())
	if err == nil {
		_, err = dispatch.DecodeEvent("issue_comment", payload)
	}
	if err != nil {
		return Mention{}, fmt.Errorf("webhook payload: %w", err)
	}
	return Mention{Repo: repo, Number: num, IsPR: isPR, JobID: transport.JobID(c.GetNodeID()), Payload: payload, Trigger: webhook.Trigger{
		Event: "issue_comment", Action: "created", Repo: repo, RepoOwnerType: "User", Number: num, IsPR: isPR,
		CommentID: c.GetID(), NodeID: c.GetNodeID(), Author: user, AuthorType: "User", Body: c.GetBody(),
		URL: c.GetHTMLURL(), CreatedAt: c.GetCreatedAt().Time,
	}}, nil
}

// DispatchTrigger is the dispatcher's trigger for m as the webhook mode
// builds it from the delivery (with the payload's repository and issue).
func (m Mention) DispatchTrigger() *dispatch.Trigger {
	t, err := dispatch.DecodeEvent("issue_comment", m.Payload)
	if err != nil { // SeedMentions decoded it once already
		panic(fmt.Sprintf("loadtest: payload of %s: %v", m.JobID, err))
	}
	return t
}
