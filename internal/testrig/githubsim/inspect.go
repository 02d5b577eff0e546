package githubsim

import (
	"context"
	"encoding/json"

	"github.com/google/go-github/v62/github"
)

// Inspection helpers read state for assertions; they are not logged.

func decodeInto[T any](v obj) *T {
	data, _ := marshal(v)
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
	return reactionContents(cm.reactions)
}

// reactionContents lists the contents of list, in creation order.
func reactionContents(list []*reaction) []string {
	out := make([]string, 0, len(list))
	for _, rc := range list {
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

// Requests returns the request log in arrival order.
func (s *Sim) Requests() []LoggedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitAnsweredLocked()
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
	s.waitAnsweredLocked()
	s.requests = nil
}

// startAnswer records that request id is about to show its outcome.
func (s *Sim) startAnswer(id int64) {
	s.mu.Lock()
	s.answering[id] = struct{}{}
	s.mu.Unlock()
}

// waitAnsweredLocked waits until every request that had started answering
// when it was called is in the log. Requests still being handled without
// an answer (a hang) are not waited for; the client cannot have seen them.
func (s *Sim) waitAnsweredLocked() {
	var upTo int64
	for id := range s.answering {
		upTo = max(upTo, id)
	}
	for {
		pending := false
		for id := range s.answering {
			if id <= upTo {
				pending = true
				break
			}
		}
		if !pending {
			return
		}
		s.logged.Wait()
	}
}

// Refs lists the full ref names of repo starting with prefix (e.g.
// "refs/heads/"), sorted.
func (s *Sim) Refs(repo, prefix string) []string {
	g := s.gitOf(repo)
	if g == nil {
		return nil
	}
	var refs []string
	for _, r := range g.listRefs(context.Background(), prefix) {
		refs = append(refs, r.name)
	}
	return refs
}

// gitOf is repo's git store (nil if unknown).
func (s *Sim) gitOf(repo string) *gitStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[lower(repo)]; r != nil {
		return r.git
	}
	return nil
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

// BranchLog is the raw text (headers and message) of the last n commits
// on repo's branch, following first parents, newest first; nil when the
// branch does not exist.
func (s *Sim) BranchLog(repo, branch string, n int) []string {
	g := s.gitOf(repo)
	if g == nil {
		return nil
	}
	ctx := context.Background()
	var out []string
	for sha := g.ref("refs/heads/" + branch); sha != "" && len(out) < n; {
		o, ok := g.get(ctx, sha)
		if !ok || o.typ != "commit" {
			break
		}
		out = append(out, string(o.data))
		ci := parseCommit(o.data)
		if len(ci.parents) == 0 {
			break
		}
		sha = ci.parents[0]
	}
	return out
}

// PullHead is the head branch of repo's pull request number ("" = none).
func (s *Sim) PullHead(repo string, number int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return ""
	}
	if is := r.issues[number]; is != nil && is.pull != nil {
		return is.pull.headRef
	}
	return ""
}
