package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/sanitize"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
)

// marker is the hidden line that lets a retry find a reply it already posted.
func marker(kind string, t *Trigger) string { return contract.ReplyMarker(kind, t.CommentID, t.NodeID) }

// Keys of the reply budgets in the rate state: no login holds a ":".
const (
	replyAllKey      = "reply:*"
	replyAuthorKeyOf = "reply:"
)

// replySlot decides whether the bot may reply to t (a reply of kind) and,
// if so, counts the reply against the budgets: ReplyPerAuthor (the
// author's replies in every repository) and ReplyPerHour (the account's),
// each per rolling hour, kept in the rate state with the run counts, so
// they hold across restarts and dispatchers as the run limit does. A
// repository the opt-out list blocks gets no reply at all, but for
// confirm: the one confirmation of a "go away" that changed the list
// (SPEC §7), still within both budgets (a user alternating "go away" and
// "come back" gets no more replies than the budgets allow). why is the
// reason for silence ("" = reply).
// Each entry carries jobID with a suffix of its own: the state keeps one
// entry per id, and a retry of the same mention counts once.
func (d *Dispatcher) replySlot(ctx context.Context, t *Trigger, jobID, kind string, blocked, confirm bool) (why string, err error) {
	st, err := d.rate(ctx)
	if err != nil {
		return "", err
	}
	author := replyAuthorKeyOf + strings.ToLower(t.Author)
	now := d.cfg.Now()
	d.mu.Lock()
	byAuthor, all := st.count(author, jobID+"/reply-author", now), st.count(replyAllKey, jobID+"/reply-all", now)
	d.mu.Unlock()
	switch {
	case blocked && !confirm:
		why = fmt.Sprintf("%s is blocked by the opt-out list: the bot does not reply there", t.Repo)
	case byAuthor >= d.cfg.ReplyPerAuthor:
		why = fmt.Sprintf("@%s already had %d replies in the last hour (reply limit per author %d)", t.Author, byAuthor, d.cfg.ReplyPerAuthor)
	case all >= d.cfg.ReplyPerHour:
		why = fmt.Sprintf("the bot already posted %d replies in the last hour (reply limit %d)", all, d.cfg.ReplyPerHour)
	}
	if why != "" {
		d.cfg.Logger.Warn("reply suppressed", "kind", kind, "url", t.URL, "jobid", jobID, "repo", t.Repo, "author", t.Author, "reason", why)
		return why, nil
	}
	d.recordRun(author, jobID+"/reply-author")
	d.recordRun(replyAllKey, jobID+"/reply-all")
	return "", nil
}

// replyOnce posts body (plus the marker) on the trigger's thread unless a
// comment by the bot with the same marker is already there.
func (d *Dispatcher) replyOnce(ctx context.Context, t *Trigger, kind, body string) error {
	mark := marker(kind, t)
	comments := t.pre.comments
	if comments == nil {
		var err error
		if comments, err = d.threadComments(ctx, t); err != nil {
			return fmt.Errorf("look for an earlier reply: %w", err)
		}
	}
	if d.replied(comments, mark) {
		return nil
	}
	owner, name := split(t.Repo)
	_, _, err := d.gh.Issues.CreateComment(ctx, owner, name, t.Number, &github.IssueComment{Body: github.String(body + "\n\n" + mark)})
	if err == nil {
		return nil
	}
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response == nil || ge.Response.StatusCode >= http.StatusInternalServerError {
		// The answer may be lost while the reply was posted: look once,
		// so this run ends with it rather than a later one finding it.
		if comments, lerr := d.threadComments(ctx, t); lerr == nil && d.replied(comments, mark) {
			return nil
		}
	}
	return fmt.Errorf("reply on %s#%d: %w", t.Repo, t.Number, err)
}

func (d *Dispatcher) threadComments(ctx context.Context, t *Trigger) ([]json.RawMessage, error) {
	return threadctx.GetAll(ctx, d.gh, fmt.Sprintf("repos/%s/issues/%d/comments", t.Repo, t.Number))
}

// replied says whether comments hold a comment by the bot with mark.
func (d *Dispatcher) replied(comments []json.RawMessage, mark string) bool {
	for _, raw := range comments {
		var c struct {
			Body string `json:"body"`
			User struct {
				Login string `json:"login"`
			} `json:"user"`
		}
		if json.Unmarshal(raw, &c) == nil && strings.EqualFold(c.User.Login, d.cfg.Bot) && strings.Contains(c.Body, mark) {
			return true
		}
	}
	return false
}

// react adds 👀 to the trigger. Reviews have no reactions on GitHub, so a
// review (like an issue or PR body) is acknowledged on the issue itself.
func (d *Dispatcher) react(ctx context.Context, t *Trigger) error {
	var u string
	switch {
	case t.Event == "issue_comment" && t.CommentID > 0:
		u = fmt.Sprintf("repos/%s/issues/comments/%d/reactions", t.Repo, t.CommentID)
	case t.Event == "pull_request_review_comment" && t.CommentID > 0:
		u = fmt.Sprintf("repos/%s/pulls/comments/%d/reactions", t.Repo, t.CommentID)
	default:
		u = fmt.Sprintf("repos/%s/issues/%d/reactions", t.Repo, t.Number)
	}
	req, err := d.gh.NewRequest(http.MethodPost, u, nil)
	if err != nil {
		return fmt.Errorf("build reaction request: %w", err)
	}
	setBody(req, []byte(`{"content":"eyes"}`))
	// GitHub answers a reaction the bot already gave with that one (200),
	// so a retry after a lost answer adds none.
	if _, err := d.gh.Do(ghclient.Repeatable(ctx), req, nil); err != nil {
		return fmt.Errorf("react on %s: %w", t.URL, err)
	}
	return nil
}

// fenced quotes untrusted text (an error naming the user's word) in a code
// fence longer than any backtick run inside it.
func fenced(s string) string {
	f := sanitize.Fence(s)
	return f + "text\n" + s + "\n" + f
}

func cfgReply(t *Trigger, bot string, err error, help string) string {
	return fmt.Sprintf("@%s I did not start a run: the `!cfg` flags could not be read.\n\n%s\n\n%s\n\nMention `@%s` again with valid flags (or without `!cfg`) to start a run.",
		t.Author, fenced(err.Error()), strings.TrimSpace(help), bot)
}

func privateReply(t *Trigger) string {
	return fmt.Sprintf("@%s I did not start a run: this repository is private, and my run logs are kept in a public repository, where this thread, code from the repository and my session would be readable by anyone. Ask the bot's operator to make the control repository private (or, if they accept that, to set `PRIVATE_TARGETS=allow`).", t.Author)
}

func rateReply(t *Trigger, limit int, retry time.Time) string {
	return fmt.Sprintf("@%s you have reached the limit of %d runs per hour, so I did not start a run for this mention. Please mention me again after %s.",
		t.Author, limit, retry.UTC().Format("15:04 UTC"))
}

func goAwayReply(t *Trigger, bot string, patterns []string) string {
	return fmt.Sprintf("@%s done: I will no longer act here. Blocked: %s.\n\nSay `@%s come back` to undo this.",
		t.Author, codeList(patterns), bot)
}

func comeBackReply(t *Trigger, removed int, patterns []string) string {
	if removed == 0 {
		return fmt.Sprintf("@%s nothing to undo: none of %s was blocked.", t.Author, codeList(patterns))
	}
	return fmt.Sprintf("@%s welcome back: I removed the block on %s.", t.Author, codeList(patterns))
}

func codeList(ps []string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "`" + p + "`"
	}
	return strings.Join(out, ", ")
}
