package policy

import (
	"fmt"
	"strings"
)

// Thread is the trigger issue/PR ("here").
type Thread struct {
	Repo   string
	Number int
}

func (t Thread) String() string { return fmt.Sprintf("%s#%d", t.Repo, t.Number) }

func (t Thread) is(repo string, number int) bool {
	return t.Number == number && strings.EqualFold(t.Repo, repo)
}

// Blocker is the opt-out list (SPEC §7); *blocklist.List satisfies it.
// Blocked is called with a lower-cased owner/name, BlockedID with the ids
// of that repository and its owner (an entry keeps its ids, so a renamed
// repository or account stays blocked).
type Blocker interface {
	Blocked(repo string) (pattern string, blocked bool)
	BlockedID(ids RepoIDs) (pattern string, blocked bool)
}

// Policy is the effective policy of one run.
type Policy struct {
	CommentOnly  bool     `json:"comment_only"`
	HereOnly     bool     `json:"here_only"`
	AllowRepos   []string `json:"allow_repos"` // lower-cased, sorted, deduped; empty = any
	DenyRepos    []string `json:"deny_repos"`
	IssueLimit   int      `json:"issue_limit"`
	PRLimit      int      `json:"pr_limit"`
	CommentLimit int      `json:"comment_limit"`
	MaxWrites    int      `json:"max_writes"` // all writes of the run together
	// LabelLimit caps label changes per run; ReviewComments caps the
	// inline comments of one review; AllowPush enables pushes onto a pull
	// request's own branch (operator settings, no user flag widens them).
	LabelLimit     int     `json:"label_limit"`
	ReviewComments int     `json:"review_comment_limit"`
	AllowPush      bool    `json:"allow_push"`
	ControlRepo    string  `json:"control_repo,omitempty"` // never written to by the agent
	Here           Thread  `json:"-"`
	Blocker        Blocker `json:"-"`
	// IDs are the repository ids a trusted job resolved (nil = none): the
	// blocklist and deny= match on them as well as on names.
	IDs IDs `json:"-"`
}

// Effective combines the user's flags with the operator's ceilings; the
// tighter always wins. here-only implies comment-only, and comment-only,
// no-issue and no-pr set the matching limits to 0. Ceilings outside
// 0…MaxLimit are clamped (callers should Validate them first).
func Effective(f Flags, c Ceilings, here Thread, b Blocker) Policy {
	p := Policy{
		CommentOnly:  f.CommentOnly || f.HereOnly,
		HereOnly:     f.HereOnly,
		AllowRepos:   normRepos(f.AllowRepos),
		DenyRepos:    normRepos(f.DenyRepos),
		IssueLimit:   tighter(c.IssueLimit, f.IssueLimit),
		PRLimit:      tighter(c.PRLimit, f.PRLimit),
		CommentLimit: tighter(c.CommentLimit, f.CommentLimit),
		MaxWrites:    clamp(c.MaxWrites),
		LabelLimit:   clamp(c.LabelLimit),
		// comment-only and here-only leave reviews their inline comments.
		ReviewComments: clamp(c.ReviewComments),
		AllowPush:      c.AllowPush,
		ControlRepo:    strings.ToLower(c.ControlRepo),
		Here:           here,
		Blocker:        b,
	}
	if p.CommentOnly || f.NoIssue {
		p.IssueLimit = 0
	}
	if p.CommentOnly || f.NoPR {
		p.PRLimit = 0
	}
	if p.CommentOnly {
		p.LabelLimit = 0
	}
	return p
}

func tighter(ceiling int, flag *int) int {
	n := clamp(ceiling)
	if flag != nil {
		n = min(n, clamp(*flag))
	}
	return n
}
