package githubsim

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNotificationsFromMentions(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	bot := w.gh["bot"]
	n, err := w.sim.CreateIssue("alice/app", "alice", "Typo", "@bot please fix")
	require.NoError(t, err)
	list, resp, err := bot.Activity.ListNotifications(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, "60", resp.Header.Get("X-Poll-Interval"))
	lastMod := resp.Header.Get("Last-Modified")
	require.NotEmpty(t, lastMod)
	require.Len(t, list, 1)
	th := list[0]
	assert.Equal(t, "mention", th.GetReason())
	assert.True(t, th.GetUnread())
	assert.Equal(t, "Issue", th.GetSubject().GetType())
	assert.Equal(t, w.base+"repos/alice/app/issues/1", th.GetSubject().GetURL())
	assert.Equal(t, w.base+"repos/alice/app/issues/1", th.GetSubject().GetLatestCommentURL())
	assert.Equal(t, "alice/app", th.GetRepository().GetFullName())

	// Conditional request: 304 without body, not counted.
	before := countedRequests(w)
	req, err := bot.NewRequest("GET", "notifications", nil)
	require.NoError(t, err)
	req.Header.Set("If-Modified-Since", lastMod)
	resp, err = bot.Do(ctx, req, nil)
	require.Error(t, err) // go-github treats 304 as an error response
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	assert.Equal(t, before, countedRequests(w))
	last := w.sim.Requests()[len(w.sim.Requests())-1]
	assert.Empty(t, last.RespBody)
	assert.False(t, last.CountedRateLimit)

	// A new mention in the same second still shows up (no stale 304).
	c, err := w.sim.Comment("alice/app", n, "alice", "ping @bot and @mallory, not `@alice` nor a@b.c")
	require.NoError(t, err)
	req, _ = bot.NewRequest("GET", "notifications", nil)
	req.Header.Set("If-Modified-Since", lastMod)
	var again []*github.Notification
	resp, err = bot.Do(ctx, req, &again)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, again, 1, "same thread, updated")
	assert.Equal(t, th.GetID(), again[0].GetID())
	assert.Equal(t, w.base+"repos/alice/app/issues/comments/"+itoa(c.GetID()), again[0].GetSubject().GetLatestCommentURL())
	assert.Len(t, w.sim.Notifications("mallory"), 1)
	assert.Empty(t, w.sim.Notifications("alice"), "own comments and code spans do not notify")

	// Mark read: 205; unread list empties; all=true still lists it.
	resp, err = bot.Activity.MarkThreadRead(ctx, th.GetID())
	require.NoError(t, err)
	assert.Equal(t, http.StatusResetContent, resp.StatusCode)
	unread, _, err := bot.Activity.ListNotifications(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, unread)
	all, _, err := bot.Activity.ListNotifications(ctx, &github.NotificationListOptions{All: true, Participating: true})
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.False(t, all[0].GetUnread())
	assert.NotNil(t, all[0].LastReadAt)
	got, _, err := bot.Activity.GetThread(ctx, th.GetID())
	require.NoError(t, err)
	assert.False(t, got.GetUnread())
	_, _, err = w.gh["mallory"].Activity.GetThread(ctx, th.GetID())
	assert.Equal(t, http.StatusNotFound, statusOf(err), "threads are private to their user")

	// A later mention marks it unread again; since/before filter by update time.
	w.now.Advance(time.Hour)
	_, err = w.sim.Comment("alice/app", n, "alice", "@bot again")
	require.NoError(t, err)
	since := w.now.Now().Add(-time.Minute)
	recent, _, err := bot.Activity.ListNotifications(ctx, &github.NotificationListOptions{Since: since})
	require.NoError(t, err)
	require.Len(t, recent, 1)
	assert.True(t, recent[0].GetUnread())
	old, _, err := bot.Activity.ListNotifications(ctx, &github.NotificationListOptions{All: true, Before: since})
	require.NoError(t, err)
	assert.Empty(t, old)

	// PR mentions produce PullRequest subjects; private repos only for readers.
	pr, err := w.sim.CreatePR("alice/app", "alice", "PR", "", "f", "main", "")
	require.NoError(t, err)
	_, err = w.sim.Comment("alice/app", pr, "alice", "@bot review")
	require.NoError(t, err)
	n2, err := w.sim.CreateIssue("alice/secret", "alice", "s", "@mallory @bot")
	require.NoError(t, err)
	_ = n2
	assert.Len(t, w.sim.Notifications("mallory"), 1, "mallory cannot read alice/secret")
	ns := w.sim.Notifications("bot")
	require.Len(t, ns, 3)
	types := map[string]int{}
	for _, n := range ns {
		types[n.GetSubject().GetType()]++
	}
	assert.Equal(t, map[string]int{"Issue": 2, "PullRequest": 1}, types)

	w.sim.SetTokenCanReadNotifications("tok-bot", false)
	_, _, err = w.client("tok-bot").Activity.ListNotifications(ctx, nil)
	assert.Equal(t, http.StatusForbidden, statusOf(err))
}

func countedRequests(w *world) int {
	n := 0
	for _, r := range w.sim.Requests() {
		if r.CountedRateLimit {
			n++
		}
	}
	return n
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestMarkReadUpTo: PUT /notifications and PUT /repos/{owner}/{repo}/
// notifications mark read the threads (of the repository) updated at or
// before last_read_at (whole seconds, the wider reading of GitHub's
// "anything updated since this time will not be marked as read"), and
// answer 205; the Date header is the simulator's clock.
func TestMarkReadUpTo(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		repo   string // "" = PUT /notifications
		upTo   *time.Time
		unread map[string]bool // issue path → unread after
	}{
		{"repo, before both", "alice/app", ptr(t0.Add(9 * time.Second)), map[string]bool{"alice/app#1": true, "alice/app#2": true, "alice/secret#1": true}},
		{"repo, within the first's second", "alice/app", ptr(t0.Add(10 * time.Second)), map[string]bool{"alice/app#1": false, "alice/app#2": true, "alice/secret#1": true}},
		{"repo, after both", "alice/app", ptr(t0.Add(time.Minute)), map[string]bool{"alice/app#1": false, "alice/app#2": false, "alice/secret#1": true}},
		{"all, between", "", ptr(t0.Add(11 * time.Second)), map[string]bool{"alice/app#1": false, "alice/app#2": true, "alice/secret#1": false}},
		{"repo, default now", "alice/app", nil, map[string]bool{"alice/app#1": false, "alice/app#2": false, "alice/secret#1": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			w.now.Set(t0.Add(10*time.Second + 500*time.Millisecond))
			_, err := w.sim.CreateIssue("alice/app", "alice", "a", "@bot one")
			require.NoError(t, err)
			_, err = w.sim.CreateIssue("alice/secret", "alice", "s", "@bot secret")
			require.NoError(t, err)
			w.now.Set(t0.Add(20 * time.Second))
			_, err = w.sim.CreateIssue("alice/app", "alice", "b", "@bot two")
			require.NoError(t, err)
			w.now.Set(t0.Add(2 * time.Minute))
			bot := w.gh["bot"]
			body := map[string]string{}
			if tc.upTo != nil {
				body["last_read_at"] = tc.upTo.Format(time.RFC3339)
			}
			path := "notifications"
			if tc.repo != "" {
				path = "repos/" + tc.repo + "/notifications"
			}
			req, err := bot.NewRequest(http.MethodPut, path, body)
			require.NoError(t, err)
			resp, err := bot.Do(ctx, req, nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusResetContent, resp.StatusCode)
			assert.Equal(t, w.now.Now().Format(http.TimeFormat), resp.Header.Get("Date"))
			got := map[string]bool{}
			for _, th := range w.sim.Notifications("bot") {
				u := th.GetSubject().GetURL()
				i := strings.Index(u, "/repos/")
				parts := strings.Split(u[i+len("/repos/"):], "/")
				got[parts[0]+"/"+parts[1]+"#"+parts[3]] = th.GetUnread()
			}
			assert.Equal(t, tc.unread, got)
		})
	}
}

func ptr[T any](v T) *T { return &v }
