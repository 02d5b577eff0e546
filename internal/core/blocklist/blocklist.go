// Package blocklist is the opt-out list (SPEC §7) and its matching rules.
// It holds no GitHub client, so the agent job can use it: package blockfile
// reads and writes the list in the control repo.
package blocklist

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// Entry blocks one repo ("owner/name") or every repo of an account ("owner/*").
type Entry struct {
	Pattern string    `json:"pattern"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Source  string    `json:"source"` // the comment that asked for it
	// ID is GitHub's numeric id of the repository ("owner/name") or of the
	// account ("owner/*"), when known. Names can change hands (a renamed or
	// transferred repo, a freed login); ids do not, so a renamed repo keeps
	// its block.
	ID int64 `json:"id,omitempty"`
}

// RepoIDs are a repository's numeric id and its owner's.
type RepoIDs = policy.RepoIDs

// SetIDs records ids on the entries naming repo ("owner/name") or its
// owner ("owner/*") that have none yet.
func (l *List) SetIDs(repo string, ids RepoIDs) {
	repo = strings.ToLower(repo)
	owner, _, _ := strings.Cut(repo, "/")
	for i := range l.Entries {
		e := &l.Entries[i]
		switch p := strings.ToLower(e.Pattern); {
		case e.ID != 0:
		case p == repo && ids.Repo != 0:
			e.ID = ids.Repo
		case p == owner+"/*" && ids.Owner != 0:
			e.ID = ids.Owner
		}
	}
}

// SetID records id on the entry whose pattern is pattern when it has none
// (the commenter's own "login/*" gets their account id).
func (l *List) SetID(pattern string, id int64) {
	for i := range l.Entries {
		if e := &l.Entries[i]; e.ID == 0 && id != 0 && strings.EqualFold(e.Pattern, pattern) {
			e.ID = id
		}
	}
}

// BlockedID reports an entry whose id is the repository's or its owner's,
// whatever the names are now.
func (l *List) BlockedID(ids RepoIDs) (string, bool) {
	if l == nil {
		return "", false
	}
	for _, e := range l.Entries {
		if e.ID == 0 {
			continue
		}
		if account := strings.HasSuffix(e.Pattern, "/*"); account && e.ID == ids.Owner || !account && e.ID == ids.Repo {
			return e.Pattern, true
		}
	}
	return "", false
}

// List is the file's content plus the sha it was read at.
type List struct {
	Entries []Entry `json:"entries"`
	SHA     string  `json:"-"`
}

// Blocked reports whether repo is covered by an entry, and by which pattern.
// It satisfies policy.Blocker.
func (l *List) Blocked(repo string) (string, bool) {
	if l == nil {
		return "", false
	}
	repo = strings.ToLower(repo)
	owner, _, _ := strings.Cut(repo, "/")
	for _, e := range l.Entries {
		p := strings.ToLower(e.Pattern)
		if p == repo || p == owner+"/*" {
			return e.Pattern, true
		}
	}
	return "", false
}

// Validate reports the first entry whose pattern is not "owner/name" or
// "owner/*": a list that cannot be read exactly must not be guessed at.
func (l *List) Validate() error {
	if l == nil {
		return nil
	}
	for i, e := range l.Entries {
		owner, name, ok := strings.Cut(e.Pattern, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("entry %d: pattern %q is not owner/name or owner/*", i, e.Pattern)
		}
	}
	return nil
}

// Add appends entries for patterns not yet listed and reports how many it added.
func (l *List) Add(patterns []string, by, source string, at time.Time) int {
	n := 0
	for _, p := range patterns {
		p = strings.ToLower(p)
		if l.has(p) {
			continue
		}
		l.Entries = append(l.Entries, Entry{Pattern: p, By: by, At: at.UTC(), Source: source})
		n++
	}
	sort.SliceStable(l.Entries, func(i, j int) bool { return l.Entries[i].Pattern < l.Entries[j].Pattern })
	return n
}

// Remove drops entries whose pattern is in patterns and reports how many.
// An entry that keeps an id is dropped only when idOf (pattern → the id
// the remover holds that name under; nil = none known) gives the same id:
// a login or repository name that changed hands cannot lift the block of
// the account or repository that held it before.
func (l *List) Remove(patterns []string, idOf map[string]int64) int {
	drop := map[string]bool{}
	for _, p := range patterns {
		drop[strings.ToLower(p)] = true
	}
	kept := l.Entries[:0]
	for _, e := range l.Entries {
		p := strings.ToLower(e.Pattern)
		if !drop[p] || e.ID != 0 && idOf[p] != e.ID {
			kept = append(kept, e)
		}
	}
	n := len(l.Entries) - len(kept)
	l.Entries = kept
	return n
}

// RemoveIDs drops account entries ("owner/*") whose id is in accounts and
// repository entries whose id is in repos, whatever names they were written
// under (the account or repository was renamed since), and reports how many.
func (l *List) RemoveIDs(accounts, repos []int64) int {
	kept := l.Entries[:0]
	for _, e := range l.Entries {
		list := repos
		if strings.HasSuffix(e.Pattern, "/*") {
			list = accounts
		}
		if e.ID == 0 || !slices.Contains(list, e.ID) {
			kept = append(kept, e)
		}
	}
	n := len(l.Entries) - len(kept)
	l.Entries = kept
	return n
}

func (l *List) has(p string) bool {
	for _, e := range l.Entries {
		if strings.EqualFold(e.Pattern, p) {
			return true
		}
	}
	return false
}

// Authority is what the commenter may speak for (SPEC §7).
type Authority struct {
	Commenter string // always their own account
	Repo      string // the repo of the thread
	CanWrite  bool   // write, maintain or admin on Repo
	OrgAdmin  bool   // admin of the organisation that owns Repo
}

// Patterns returns what "go away" blocks and "come back" unblocks for a.
func (a Authority) Patterns() []string {
	out := []string{strings.ToLower(a.Commenter) + "/*"}
	owner, _, _ := strings.Cut(strings.ToLower(a.Repo), "/")
	if a.OrgAdmin && owner != "" && owner != strings.ToLower(a.Commenter) {
		out = append(out, owner+"/*")
	}
	if a.CanWrite && a.Repo != "" && owner != strings.ToLower(a.Commenter) {
		out = append(out, strings.ToLower(a.Repo))
	}
	return out
}

// LiftPatterns returns what "come back" removes for a: what a could add,
// plus the thread's repo itself when a owns it or may write to it, so an
// owner or admin can lift a block a collaborator put on their repo.
func (a Authority) LiftPatterns() []string {
	out := a.Patterns()
	repo := strings.ToLower(a.Repo)
	owner, _, _ := strings.Cut(repo, "/")
	if repo != "" && (a.CanWrite || owner == strings.ToLower(a.Commenter)) && !slices.Contains(out, repo) {
		out = append(out, repo)
	}
	return out
}
