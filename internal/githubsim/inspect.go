package githubsim

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// Inspection helpers read state for assertions; they are not logged.

func decodeInto[T any](v obj) *T {
	data, _ := json.Marshal(v)
	out := new(T)
	_ = json.Unmarshal(data, out)
	return out
}

func toIssueComment(v obj) *github.IssueComment { return decodeInto[github.IssueComment](v) }

// Issue returns an issue or pull request (as GitHub's issue view) by number.
func (s *Sim) Issue(repo string, number int) (*github.Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.issues[number] == nil {
		return nil, false
	}
	return decodeInto[github.Issue](s.issueLocked(s.baseLocked(), r, r.issues[number])), true
}

// Issues returns every issue of repo by number, pull requests included (as
// GitHub's issues list does; they carry PullRequestLinks).
func (s *Sim) Issues(repo string) []*github.Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return nil
	}
	out := make([]*github.Issue, 0, len(r.issues))
	for n := 1; n < r.nextNumber; n++ {
		if is := r.issues[n]; is != nil {
			out = append(out, decodeInto[github.Issue](s.issueLocked(s.baseLocked(), r, is)))
		}
	}
	return out
}

// Comments returns the comments of an issue or PR in creation order.
func (s *Sim) Comments(repo string, number int) []*github.IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || r.issues[number] == nil {
		return nil
	}
	var out []*github.IssueComment
	for _, id := range r.issues[number].comments {
		if cm := s.comments[id]; cm != nil {
			out = append(out, toIssueComment(s.commentLocked(s.baseLocked(), r, cm)))
		}
	}
	return out
}

// Reactions returns the reaction contents on a comment, in creation order.
func (s *Sim) Reactions(repo string, commentID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	cm := s.comments[commentID]
	if cm == nil || cm.repo != lower(repo) {
		return nil
	}
	out := make([]string, 0, len(cm.reactions))
	for _, rc := range cm.reactions {
		out = append(out, rc.content)
	}
	return out
}

// Dispatches returns every accepted repository_dispatch to repo, in order.
func (s *Sim) Dispatches(repo string) []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return nil
	}
	return append([]Dispatch(nil), r.dispatches...)
}

// OnDispatch registers fn, called synchronously (without the simulator's lock
// held) after each accepted dispatch and before the 204 is sent.
func (s *Sim) OnDispatch(fn func(repo string, d Dispatch)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, fn)
}

// Requests returns the request log in arrival order of completion.
func (s *Sim) Requests() []LoggedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	reqs := s.requests
	if s.logLimit > 0 && len(reqs) > s.logLimit {
		reqs = reqs[len(reqs)-s.logLimit:]
	}
	return append([]LoggedRequest(nil), reqs...)
}

// defaultLogLimit bounds the request log; older entries are dropped first.
const defaultLogLimit = 20000

// SetRequestLogLimit keeps at most n logged requests (the newest); n <= 0
// keeps everything.
func (s *Sim) SetRequestLogLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLimit = n
}

// ResetRequests empties the request log.
func (s *Sim) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Refs lists the full ref names of repo starting with prefix (e.g.
// "refs/heads/"), sorted.
func (s *Sim) Refs(repo, prefix string) []string {
	dir := s.GitDir(repo)
	if dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := s.runGit(ctx, dir, nil, nil, "for-each-ref", "--format=%(refname)")
	if err != nil {
		s.logf("githubsim: refs %s: %v", repo, err)
		return nil
	}
	var refs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && strings.HasPrefix(l, prefix) {
			refs = append(refs, l)
		}
	}
	sort.Strings(refs)
	return refs
}

// GitDir is the path of repo's bare git repository ("" if unknown).
func (s *Sim) GitDir(repo string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[lower(repo)]; r != nil {
		return r.gitPath
	}
	return ""
}

// Notifications returns login's notification threads (read ones included),
// newest first, as the API renders them.
func (s *Sim) Notifications(login string) []*github.Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*github.Notification
	for _, t := range s.sortedThreadsLocked(login) {
		out = append(out, decodeInto[github.Notification](s.threadLocked(s.baseLocked(), t)))
	}
	return out
}
