// Package blockfile keeps the opt-out list (package blocklist) as a JSON
// file in the control repo, read by the dispatcher and the runner, updated
// through the contents API with the file's sha so concurrent writers never
// lose an entry. The agent job never imports it: it holds the GitHub client.
package blockfile

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/identity"
	"github.com/mention-runner/mention-runner/internal/core/repofile"
)

// Store reads and writes the list in the control repo.
type Store struct {
	Client *github.Client
	Repo   string // control repo, owner/name
	Path   string // "" = DefaultPath
	// Attempts bounds the read-modify-write loop on conflicts (0 = 5).
	Attempts int
	// IDs, when set, gives entries that carry no id their repository or
	// account id on every write (best effort: an entry it
	// cannot resolve keeps matching by name).
	IDs *identity.Resolver
}

// ErrConflict means every attempt lost the race to another writer.
var ErrConflict = errors.New("blocklist: too many concurrent updates")

func (s *Store) path() string {
	if s.Path == "" {
		return contract.BlocklistPath
	}
	return s.Path
}

func (s *Store) file() repofile.File {
	return repofile.File{Client: s.Client, Repo: s.Repo, Path: s.path()}
}

// Load reads the list; a missing file is an empty list, a corrupt one an
// error (a corrupt list must not silently unblock everyone).
func (s *Store) Load(ctx context.Context) (*blocklist.List, error) {
	l := &blocklist.List{}
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
func (s *Store) Update(ctx context.Context, message string, mutate func(*blocklist.List) bool) (*blocklist.List, error) {
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
		if s.IDs != nil {
			_ = s.IDs.Fill(ctx, l) // best effort: names still match
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
