package githubsim

import (
	"fmt"
	"slices"
)

// CommentEvent returns the body of the issue_comment "created" webhook
// delivery GitHub sends for a comment: the issue, the comment, the
// repository and the sender, in the REST API's shapes. It is built from the
// simulator's state directly (not logged, never faulted), so tests can hand
// a dispatcher what a webhook would carry.
func (s *Sim) CommentEvent(repo string, commentID int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	cm := s.comments[commentID]
	if r == nil || cm == nil || r.issues[cm.number] == nil || !slices.Contains(r.issues[cm.number].comments, commentID) {
		return nil, fmt.Errorf("githubsim: no comment %d in %s", commentID, repo)
	}
	base := s.baseLocked()
	return marshal(obj{
		"action": "created", "issue": s.issueLocked(base, r, r.issues[cm.number]),
		"comment": s.commentLocked(base, r, cm), "repository": s.repoLocked(base, r, true, ""),
		"sender": s.simpleUserLocked(base, cm.author),
	})
}
