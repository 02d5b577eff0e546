package blockfile

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

func newStore(t *testing.T) (*Store, *githubsim.Sim) {
	t.Helper()
	sim, _ := simfixture.Start(t, githubsim.Options{Seed: 1})
	simfixture.Writer(t, sim, "acme/control", "bot", "tok", true)
	return &Store{Client: sim.Client("tok"), Repo: "acme/control"}, sim
}

func TestStoreRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	l, err := s.Load(ctx)
	require.NoError(t, err, "a missing file is an empty list")
	assert.Empty(t, l.Entries)

	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l, err = s.Update(ctx, "block bob", func(l *blocklist.List) bool { return l.Add([]string{"bob/*"}, "bob", "https://c/1", at) > 0 })
	require.NoError(t, err)
	assert.NotEmpty(t, l.SHA)

	l, err = s.Load(ctx)
	require.NoError(t, err)
	require.Len(t, l.Entries, 1)
	assert.Equal(t, blocklist.Entry{Pattern: "bob/*", By: "bob", At: at, Source: "https://c/1"}, l.Entries[0])

	// no change, no write
	before := l.SHA
	l, err = s.Update(ctx, "noop", func(l *blocklist.List) bool { return false })
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
			_, err := s.Update(ctx, "block "+who, func(l *blocklist.List) bool { return l.Add([]string{who + "/*"}, who, "", time.Now()) > 0 })
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
	_, _, err := s.Client.Repositories.CreateFile(ctx, "acme", "control", contract.BlocklistPath, &github.RepositoryContentFileOptions{
		Message: github.String("corrupt"), Content: []byte("{not json"),
	})
	require.NoError(t, err)
	_, err = s.Load(ctx)
	assert.ErrorContains(t, err, "not valid JSON")

	bad := &Store{Client: s.Client, Repo: "nope"}
	_, err = bad.Load(ctx)
	assert.ErrorContains(t, err, "not owner/name")
}
