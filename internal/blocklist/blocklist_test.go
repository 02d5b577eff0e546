package blocklist

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/githubsim"
)

func TestBlocked(t *testing.T) {
	l := &List{Entries: []Entry{{Pattern: "alice/*"}, {Pattern: "acme/widgets"}}}
	cases := []struct {
		repo    string
		pattern string
		blocked bool
	}{
		{"alice/anything", "alice/*", true},
		{"Alice/Repo", "alice/*", true},
		{"acme/widgets", "acme/widgets", true},
		{"ACME/Widgets", "acme/widgets", true},
		{"acme/gadgets", "", false},
		{"alicex/repo", "", false},
	}
	for _, c := range cases {
		p, ok := l.Blocked(c.repo)
		assert.Equal(t, c.blocked, ok, c.repo)
		assert.Equal(t, c.pattern, p, c.repo)
	}
	var nilList *List
	_, ok := nilList.Blocked("a/b")
	assert.False(t, ok)
}

func TestAuthorityPatterns(t *testing.T) {
	cases := []struct {
		name string
		a    Authority
		want []string
	}{
		{"passer-by blocks only their own account", Authority{Commenter: "Bob", Repo: "acme/widgets"}, []string{"bob/*"}},
		{"collaborator also blocks the repo", Authority{Commenter: "bob", Repo: "acme/widgets", CanWrite: true}, []string{"bob/*", "acme/widgets"}},
		{"org admin blocks the org", Authority{Commenter: "bob", Repo: "acme/widgets", CanWrite: true, OrgAdmin: true}, []string{"bob/*", "acme/*", "acme/widgets"}},
		{"owner's own repo is covered by owner/*", Authority{Commenter: "bob", Repo: "bob/app", CanWrite: true}, []string{"bob/*"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, c.a.Patterns()) })
	}
}

func TestAddRemove(t *testing.T) {
	l := &List{}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, 2, l.Add([]string{"Bob/*", "acme/widgets"}, "bob", "https://x", at))
	assert.Equal(t, 0, l.Add([]string{"bob/*"}, "bob", "https://y", at), "no duplicates")
	assert.Equal(t, "acme/widgets", l.Entries[0].Pattern)
	assert.Equal(t, 1, l.Remove([]string{"ACME/widgets", "nobody/*"}))
	assert.Len(t, l.Entries, 1)
}

func newStore(t *testing.T) (*Store, *githubsim.Sim) {
	t.Helper()
	sim, err := githubsim.New(githubsim.Options{Seed: 1})
	require.NoError(t, err)
	_, err = sim.Start()
	require.NoError(t, err)
	t.Cleanup(func() { sim.Close() })
	sim.AddUser("acme")
	sim.AddUser("bot")
	sim.AddToken("tok", "bot")
	_, err = sim.AddRepo("acme/control", true)
	require.NoError(t, err)
	sim.SetPermission("acme/control", "bot", "write")
	return &Store{Client: sim.Client("tok"), Repo: "acme/control"}, sim
}

func TestStoreRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	l, err := s.Load(ctx)
	require.NoError(t, err, "a missing file is an empty list")
	assert.Empty(t, l.Entries)

	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l, err = s.Update(ctx, "block bob", func(l *List) bool { return l.Add([]string{"bob/*"}, "bob", "https://c/1", at) > 0 })
	require.NoError(t, err)
	assert.NotEmpty(t, l.SHA)

	l, err = s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, l.Entries, 1)
	assert.Equal(t, Entry{Pattern: "bob/*", By: "bob", At: at, Source: "https://c/1"}, l.Entries[0])

	// no change, no write
	before := l.SHA
	l, err = s.Update(ctx, "noop", func(l *List) bool { return false })
	require.NoError(t, err)
	assert.Equal(t, before, l.SHA)
}

// Concurrent writers each read, add and write with the sha they read; the
// losers retry from a fresh read, so no entry is lost.
func TestStoreConcurrentUpdatesLoseNothing(t *testing.T) {
	s, _ := newStore(t)
	s.Attempts = 20
	ctx := context.Background()
	logins := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	var wg sync.WaitGroup
	for _, who := range logins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(ctx, "block "+who, func(l *List) bool { return l.Add([]string{who + "/*"}, who, "", time.Now()) > 0 })
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	l, err := s.Load(ctx)
	require.NoError(t, err)
	assert.Len(t, l.Entries, len(logins))
}

func TestStoreCorruptFileFailsClosed(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	_, _, err := s.Client.Repositories.CreateFile(ctx, "acme", "control", DefaultPath, &github.RepositoryContentFileOptions{
		Message: github.String("corrupt"), Content: []byte("{not json"),
	})
	require.NoError(t, err)
	_, err = s.Load(ctx)
	assert.ErrorContains(t, err, "not valid JSON")

	bad := &Store{Client: s.Client, Repo: "nope"}
	_, err = bad.Load(ctx)
	assert.ErrorContains(t, err, "not owner/name")
}
