package githubsim

import (
	"encoding/json"
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

// DispatchEvent returns the repository_dispatch event GitHub hands the
// workflow run d starts (GITHUB_EVENT_PATH): the event type as "action",
// the payload, the repository and the sender. Like CommentEvent it is
// built from the simulator's state (not logged, never faulted): GitHub
// writes it, no token of the run reads it.
func (s *Sim) DispatchEvent(repo, sender string, d Dispatch) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil || s.users[lower(sender)] == nil {
		return nil, fmt.Errorf("githubsim: no repository %s or account %s", repo, sender)
	}
	payload := d.ClientPayload
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	base := s.baseLocked()
	return marshal(obj{
		"action": d.EventType, "branch": r.meta.DefaultBranch, "client_payload": payload,
		"repository": s.repoLocked(base, r, true, ""), "sender": s.simpleUserLocked(base, sender),
	})
}

// RepoIDs are repo's id and its owner's, as Actions gives them to a
// workflow running in it (GITHUB_REPOSITORY_ID, GITHUB_REPOSITORY_OWNER_ID).
func (s *Sim) RepoIDs(repo string) (id, ownerID int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return 0, 0, fmt.Errorf("githubsim: no repository %s", repo)
	}
	owner := s.users[lower(r.meta.Owner)]
	if owner == nil {
		return 0, 0, fmt.Errorf("githubsim: no owner %s of %s", r.meta.Owner, repo)
	}
	return r.meta.ID, owner.ID, nil
}
