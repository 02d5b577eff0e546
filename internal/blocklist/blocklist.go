// Package blocklist is the durable opt-out list (SPEC §7): a JSON file in the
// control repo, read by the dispatcher and the runner, updated through the
// contents API with the file's sha so concurrent writers never lose an entry.
package blocklist

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/repofile"
)

// DefaultPath is where the list lives in the control repo.
const DefaultPath = ".mention-runner/blocklist.json"

// Entry blocks one repo ("owner/name") or every repo of an account ("owner/*").
type Entry struct {
	Pattern string    `json:"pattern"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Source  string    `json:"source"` // the comment that asked for it
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
func (l *List) Remove(patterns []string) int {
	drop := map[string]bool{}
	for _, p := range patterns {
		drop[strings.ToLower(p)] = true
	}
	kept := l.Entries[:0]
	for _, e := range l.Entries {
		if !drop[strings.ToLower(e.Pattern)] {
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

// Store reads and writes the list in the control repo.
type Store struct {
	Client *github.Client
	Repo   string // control repo, owner/name
	Path   string // "" = DefaultPath
	// Attempts bounds the read-modify-write loop on conflicts (0 = 5).
	Attempts int
}

// ErrConflict means every attempt lost the race to another writer.
var ErrConflict = errors.New("blocklist: too many concurrent updates")

func (s *Store) path() string {
	if s.Path == "" {
		return DefaultPath
	}
	return s.Path
}

func (s *Store) file() repofile.File {
	return repofile.File{Client: s.Client, Repo: s.Repo, Path: s.path()}
}

// Load reads the list; a missing file is an empty list, a corrupt one an
// error (a corrupt list must not silently unblock everyone).
func (s *Store) Load(ctx context.Context) (*List, error) {
	l := &List{}
	sha, err := s.file().Read(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("blocklist: %w", err)
	}
	l.SHA = sha
	return l, nil
}

// Update applies mutate to a fresh copy and writes it back with the sha it
// was read at, retrying from a fresh read when another writer got there
// first. mutate returns false when nothing changed (no write is made).
func (s *Store) Update(ctx context.Context, message string, mutate func(*List) bool) (*List, error) {
	attempts := s.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	for i := 0; i < attempts; i++ {
		l, err := s.Load(ctx)
		if err != nil {
			return nil, err
		}
		if !mutate(l) {
			return l, nil
		}
		sha, err := s.file().Write(ctx, message, l, l.SHA)
		if errors.Is(err, repofile.ErrConflict) {
			continue // someone else wrote first: read again
		}
		if err != nil {
			return nil, fmt.Errorf("blocklist: %w", err)
		}
		l.SHA = sha
		return l, nil
	}
	return nil, ErrConflict
}
