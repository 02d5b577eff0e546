package githubsim

import "strconv"

// reviewCommentLocked finds the review comment in the path among the pull
// requests of a readable repository. Review comment ids are global, as on
// GitHub, so the repository in the path must be the comment's own.
func (c *call) reviewCommentLocked(need string) (*reviewComment, func()) {
	r, fail := c.repoLocked(need)
	if fail != nil {
		return nil, fail
	}
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	if err != nil {
		return nil, c.notFoundF()
	}
	if rc := findReviewComment(r, id); rc != nil {
		return rc, nil
	}
	return nil, c.notFoundF()
}

// findReviewComment scans r's pull requests; the simulator holds few, so a
// scan is cheaper to keep right than a second index.
func findReviewComment(r *repoState, id int64) *reviewComment {
	for _, is := range r.issues {
		if is.pull == nil {
			continue
		}
		for _, rc := range is.pull.rcomms {
			if rc.id == id {
				return rc
			}
		}
	}
	return nil
}

func (c *call) createReviewCommentReaction() { c.createReaction(c.reviewCommentReactionsLocked) }
func (c *call) listReviewCommentReactions()  { c.listReactionsOf(c.reviewCommentReactionsLocked) }

func (c *call) reviewCommentReactionsLocked() (*[]*reaction, func()) {
	rc, fail := c.reviewCommentLocked("read")
	if fail != nil {
		return nil, fail
	}
	return &rc.reactions, nil
}

// ReviewCommentReactions returns the reaction contents on a pull request
// review comment, in creation order (Reactions covers issue comments).
func (s *Sim) ReviewCommentReactions(repo string, commentID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[lower(repo)]
	if r == nil {
		return nil
	}
	rc := findReviewComment(r, commentID)
	if rc == nil {
		return nil
	}
	return reactionContents(rc.reactions)
}
