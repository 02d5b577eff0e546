package githubsim

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// notifyMentionsLocked creates or refreshes a "mention" thread for every
// user mentioned in body who can read the repository (not the author).
func (s *Sim) notifyMentionsLocked(r *repoState, is *issue, author, body, latestPath string, at time.Time) {
	for _, m := range mentions(body) {
		u := s.users[lower(m)]
		if u == nil || u.Kind != "User" || equalFold(m, author) || !atLeast(s.permissionLocked(r, u.Login), "read") {
			continue
		}
		key := fmt.Sprintf("%s#%d", lower(r.meta.FullName), is.number)
		byUser := s.userThr[lower(u.Login)]
		if byUser == nil {
			byUser = map[string]*thread{}
			s.userThr[lower(u.Login)] = byUser
		}
		t := byUser[key]
		if t == nil {
			t = &thread{id: strconv.FormatInt(s.newIDLocked(), 10), login: lower(u.Login), repo: lower(r.meta.FullName), number: is.number}
			byUser[key] = t
			s.threads[t.id] = t
		}
		t.reason, t.unread, t.updated, t.latestURL = "mention", true, at, latestPath
		t.subjectTyp = "Issue"
		if is.pull != nil {
			t.subjectTyp = "PullRequest"
		}
		s.notifVer[lower(u.Login)]++
	}
}

// sortedThreadsLocked returns login's threads, most recently updated first.
func (s *Sim) sortedThreadsLocked(login string) []*thread {
	var list []*thread
	for _, t := range s.userThr[lower(login)] {
		list = append(list, t)
	}
	sort.Slice(list, func(i, j int) bool {
		if !list[i].updated.Equal(list[j].updated) {
			return list[i].updated.After(list[j].updated)
		}
		return list[i].id > list[j].id
	})
	return list
}

func (s *Sim) threadLocked(base string, t *thread) obj {
	r := s.repos[t.repo]
	is := r.issues[t.number]
	url := base + "notifications/threads/" + t.id
	return obj{
		"id": t.id, "unread": t.unread, "reason": t.reason, "updated_at": ts(t.updated),
		"last_read_at": tsOrNil(t.lastRead),
		"subject": obj{
			"title": is.title, "url": base + s.issueAPIPath(r, is),
			"latest_comment_url": base + t.latestURL, "type": t.subjectTyp,
		},
		"repository": s.repoLocked(base, r, false, ""), "url": url, "subscription_url": url + "/subscription",
	}
}

// pollInterval is the X-Poll-Interval GitHub sends, in seconds.
const pollInterval = "60"

func (c *call) listNotifications() {
	if !c.requireLogin() {
		return
	}
	q := c.r.URL.Query()
	since, ok := c.timeQuery("since")
	if !ok {
		return
	}
	before, ok := c.timeQuery("before")
	if !ok {
		return
	}
	ims := c.r.Header.Get("If-Modified-Since")
	c.locked(func() func() {
		if ti := c.s.tokens[c.token]; ti != nil && !ti.notifications {
			return c.errF(http.StatusForbidden, "Resource not accessible by personal access token")
		}
		login := lower(c.login)
		threads := c.s.sortedThreadsLocked(login)
		lastMod := c.s.users[login].CreatedAt
		if len(threads) > 0 {
			lastMod = threads[0].updated
		}
		lm := lastMod.UTC().Format(http.TimeFormat)
		ver := c.s.notifVer[login]
		h := c.w.Header()
		h.Set("X-Poll-Interval", pollInterval)
		h.Set("Last-Modified", lm)
		if ims != "" && c.s.notModifiedLocked(login, ims, lastMod, ver) {
			return func() {
				c.refund()
				c.noContent(http.StatusNotModified)
			}
		}
		served := c.s.servedLM[login]
		if served == nil {
			served = map[string]int{}
			c.s.servedLM[login] = served
		}
		served[lm] = ver
		all, participating := q.Get("all") == "true", q.Get("participating") == "true"
		var sel []*thread
		for _, t := range threads {
			switch {
			case !all && !t.unread:
			case participating && !participatingReason[t.reason]:
			case !since.IsZero() && t.updated.Before(since):
			case !before.IsZero() && !t.updated.Before(before):
			default:
				sel = append(sel, t)
			}
		}
		return pageJSONF(c, sel, func(t *thread) any { return c.s.threadLocked(c.base, t) })
	})
}

var participatingReason = map[string]bool{
	"mention": true, "author": true, "comment": true, "assign": true, "review_requested": true, "team_mention": true, "manual": true,
}

// notModifiedLocked decides a conditional request. A Last-Modified value the
// simulator sent is compared by change counter, so two mentions within the
// same second are never hidden behind a 304; other dates compare as times.
func (s *Sim) notModifiedLocked(login, ims string, lastMod time.Time, ver int) bool {
	if v, ok := s.servedLM[login][ims]; ok {
		return v == ver
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false
	}
	return !lastMod.Truncate(time.Second).After(t)
}

// onThread answers a request about one of the caller's threads: 404 for a
// thread that is not the caller's, else what do answers (under the lock).
func (c *call) onThread(do func(t *thread) func()) {
	if !c.requireLogin() {
		return
	}
	c.locked(func() func() {
		t := c.s.threads[c.params["id"]]
		if t == nil || t.login != lower(c.login) {
			return c.notFoundF()
		}
		return do(t)
	})
}

func (c *call) getThread() {
	c.onThread(func(t *thread) func() { return c.jsonF(http.StatusOK, c.s.threadLocked(c.base, t)) })
}

// markThreadRead answers 205 Reset Content, as GitHub does.
func (c *call) markThreadRead() {
	c.onThread(func(t *thread) func() {
		t.unread, t.lastRead = false, c.s.now().UTC()
		return func() { c.noContent(http.StatusResetContent) }
	})
}

// markNotificationsRead is PUT /notifications: every thread of the caller
// updated at or before last_read_at (default now) becomes read.
func (c *call) markNotificationsRead() { c.markUpTo("") }

// markRepoNotificationsRead is PUT /repos/{owner}/{repo}/notifications:
// the same for one repository's threads.
func (c *call) markRepoNotificationsRead() {
	if !c.requireLogin() {
		return
	}
	var repo string
	c.locked(func() func() {
		r, fail := c.repoLocked("read")
		if fail != nil {
			return fail
		}
		repo = lower(r.meta.FullName)
		return nil
	})
	if repo != "" {
		c.markUpTo(repo)
	}
}

// markUpTo marks read the caller's threads (of repo; "" = all) updated at
// or before last_read_at, answering 205 Reset Content as GitHub does.
// GitHub documents "anything updated since this time will not be marked
// as read" in whole seconds; the simulator takes the wider reading (a
// thread updated within the second of last_read_at is marked), so a
// client that leans on the narrower one loses mentions here. A marked
// thread's last_read_at becomes last_read_at.
func (c *call) markUpTo(repo string) {
	if !c.requireLogin() {
		return
	}
	var req struct {
		LastReadAt *string `json:"last_read_at"`
	}
	if !c.decode(&req) {
		return
	}
	c.locked(func() func() {
		upTo := c.s.now().UTC().Truncate(time.Second)
		if req.LastReadAt != nil {
			t, err := time.Parse(time.RFC3339, *req.LastReadAt)
			if err != nil {
				return c.invalidF("Notification", "last_read_at", "invalid", "last_read_at must be an ISO 8601 timestamp")
			}
			upTo = t.UTC()
		}
		for _, t := range c.s.userThr[lower(c.login)] {
			if repo != "" && t.repo != repo || !t.unread || t.updated.Truncate(time.Second).After(upTo) {
				continue
			}
			t.unread, t.lastRead = false, upTo
		}
		return func() { c.noContent(http.StatusResetContent) }
	})
}
