package githubsim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const secondaryDocURL = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"

// rateWindow is one primary rate-limit hour for a user (or all anonymous
// callers together).
type rateWindow struct {
	used  int
	reset time.Time
}

// SetPrimaryLimit sets the authenticated requests allowed per hour (default 5000).
func (s *Sim) SetPrimaryLimit(perHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.primary = perHour
}

// SetAccountLimit sets the requests per hour one account's tokens may
// make together, instead of SetPrimaryLimit's: GitHub allows a workflow's
// GITHUB_TOKEN 1,000 an hour per repository. 0 drops the override.
func (s *Sim) SetAccountLimit(login string, perHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acctLimit == nil {
		s.acctLimit = map[string]int{}
	}
	if perHour <= 0 {
		delete(s.acctLimit, lower(login))
		return
	}
	s.acctLimit[lower(login)] = perHour
}

// SetAnonymousLimit sets the unauthenticated requests per hour shared by all
// anonymous callers (default 60, as GitHub per IP).
func (s *Sim) SetAnonymousLimit(perHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.anonLimit = perHour
}

// SetSecondaryLimit limits content-creating requests per account per
// rolling minute; 0 turns it off (the default). See SetContentLimits.
func (s *Sim) SetSecondaryLimit(writesPerMinute int) {
	s.SetContentLimits(writesPerMinute, 0)
}

// SetContentLimits sets GitHub's per-account content-creation limits:
// writes (POST, PATCH, PUT, DELETE under /repos/) per rolling minute and
// per rolling hour, counted per account whatever token or process sends
// them (GitHub: 80 and 500). Over a limit the write is refused with a 403
// secondary rate limit and a Retry-After until the window frees a slot.
// 0 turns a limit off (the default for both).
func (s *Sim) SetContentLimits(perMinute, perHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secondary, s.secondaryHour = perMinute, perHour
	s.writes = map[string][]time.Time{}
}

// ContentWrites returns, per account login (lower case), when each write
// it made under /repos/ was accepted, oldest first: what GitHub's
// content-creation limits count.
func (s *Sim) ContentWrites() map[string][]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]time.Time, len(s.acctWrites))
	for k, v := range s.acctWrites {
		out[k] = append([]time.Time(nil), v...)
	}
	return out
}

// BusiestWindow is the most times that fall within any window of length
// d (times sorted, oldest first).
func BusiestWindow(ts []time.Time, d time.Duration) int {
	best, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= d {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

func (s *Sim) windowLocked(key string, now time.Time) (*rateWindow, int) {
	limit := s.primary
	if key == "anon" {
		limit = s.anonLimit
	} else if l, ok := s.acctLimit[strings.TrimPrefix(key, "user:")]; ok {
		limit = l
	}
	w := s.windows[key]
	if w == nil || !now.Before(w.reset) {
		w = &rateWindow{reset: now.Add(time.Hour).Truncate(time.Second)}
		s.windows[key] = w
	}
	return w, limit
}

// takePrimary counts the request against the caller's hour, or answers 403
// when the hour is used up.
func (s *Sim) takePrimary(c *call) bool {
	now := s.now()
	s.mu.Lock()
	w, limit := s.windowLocked(c.rateKey, now)
	ok := w.used < limit
	var uid int64
	if ok {
		w.used++
		c.counted = true
		c.entry.CountedRateLimit = true
	} else if u := s.users[lower(c.login)]; u != nil {
		uid = u.ID
	}
	s.mu.Unlock()
	if ok {
		return true
	}
	who := "127.0.0.1"
	if c.login != "" {
		who = "user ID " + strconv.FormatInt(uid, 10)
	}
	c.err(http.StatusForbidden, fmt.Sprintf("API rate limit exceeded for %s. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)", who), nil)
	return false
}

// refund takes a counted request back out (conditional requests answered 304).
func (c *call) refund() {
	if !c.counted {
		return
	}
	c.s.mu.Lock()
	if w := c.s.windows[c.rateKey]; w != nil && w.used > 0 {
		w.used--
	}
	c.s.mu.Unlock()
	c.counted = false
	c.entry.CountedRateLimit = false
}

// ContentWrite reports whether a request creates content in GitHub's
// sense: what the content limits count and ContentWrites records.
func ContentWrite(method, path string) bool {
	if method == http.MethodPost && strings.HasSuffix(path, ".git/git-receive-pack") {
		return true // a push: one request, counted as one write
	}
	// Marking a repository's notifications read creates nothing.
	return isWrite(method) && strings.HasPrefix(path, "/repos/") && !strings.HasSuffix(path, "/notifications")
}

// takeSecondary enforces the per-account content-creation limits and
// records each accepted write.
func (s *Sim) takeSecondary(c *call) bool {
	if !ContentWrite(c.r.Method, c.r.URL.Path) {
		return true
	}
	return s.takeWrite(c.w, c.login)
}

// takeWrite counts one content write of login, or refuses it with a
// secondary rate limit when it would exceed the account's limits.
func (s *Sim) takeWrite(w http.ResponseWriter, login string) bool {
	now := s.now()
	key := lower(login)
	if key == "" {
		key = "anon"
	}
	s.mu.Lock()
	ts := s.writes[key]
	for len(ts) > 0 && !ts[0].After(now.Add(-time.Hour)) {
		ts = ts[1:]
	}
	s.writes[key] = ts
	var wait time.Duration
	if s.secondary > 0 {
		if i := len(ts) - s.secondary; i >= 0 && ts[i].After(now.Add(-time.Minute)) {
			wait = ts[i].Add(time.Minute).Sub(now)
		}
	}
	if s.secondaryHour > 0 && len(ts) >= s.secondaryHour {
		wait = max(wait, ts[len(ts)-s.secondaryHour].Add(time.Hour).Sub(now))
	}
	if wait <= 0 {
		s.writes[key] = append(ts, now)
		s.acctWrites[key] = append(s.acctWrites[key], now)
	}
	s.mu.Unlock()
	if wait <= 0 {
		return true
	}
	writeSecondary(w, wait)
	return false
}

func writeSecondary(w http.ResponseWriter, wait time.Duration) {
	secs := int((wait + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	body := fmt.Sprintf(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":%q}`, secondaryDocURL)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(body))
}

// setRateHeaders writes X-RateLimit-* for the caller's current window.
func (c *call) setRateHeaders() {
	if c.rateKey == "" {
		return
	}
	s := c.s
	now := s.now()
	s.mu.Lock()
	w, limit := s.windowLocked(c.rateKey, now)
	used, reset := w.used, w.reset
	s.mu.Unlock()
	h := c.w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(limit-used, 0)))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}
