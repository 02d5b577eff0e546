package identity

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

func TestResolver(t *testing.T) {
	sim, _ := simfixture.Start(t, githubsim.Options{Seed: 1})
	acme := sim.AddUser("acme")
	repo, err := sim.AddRepo("acme/new", false)
	require.NoError(t, err)
	require.NoError(t, sim.AddRepoRedirect("acme/old", "acme/new"))
	sim.AddToken("tok", "acme")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := &Resolver{Client: sim.Client("tok")}

	ids, err := r.Repos(ctx, []string{"acme/new", "ACME/old", "nobody/here", "not a repo"})
	require.NoError(t, err)
	want := policy.RepoIDs{Repo: repo.ID, Owner: acme.ID}
	assert.Equal(t, policy.IDs{"acme/new": want, "acme/old": want}, ids, "the old name follows the redirect; unknown names have no ids")

	l := &blocklist.List{Entries: []blocklist.Entry{{Pattern: "acme/*"}, {Pattern: "acme/old"}, {Pattern: "ghost/*"}, {Pattern: "x/y", ID: 5}}}
	require.NoError(t, r.Fill(ctx, l))
	assert.Equal(t, []int64{acme.ID, repo.ID, 0, 5}, []int64{l.Entries[0].ID, l.Entries[1].ID, l.Entries[2].ID, l.Entries[3].ID})
}
