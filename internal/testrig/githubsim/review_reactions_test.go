package githubsim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReviewCommentReactions(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	diff := "diff --git a/x b/x\n"
	pr, err := w.sim.CreatePR("alice/app", "alice", "PR", "", "feature", "main", diff)
	require.NoError(t, err)
	rcID, err := w.sim.AddReviewComment("alice/app", pr, 0, "alice", "x", 1, "@bot rename this")
	require.NoError(t, err)
	secretPR, err := w.sim.CreatePR("alice/secret", "alice", "PR", "", "feature", "main", diff)
	require.NoError(t, err)
	secretRC, err := w.sim.AddReviewComment("alice/secret", secretPR, 0, "alice", "x", 1, "hidden")
	require.NoError(t, err)
	issue, err := w.sim.CreateIssue("alice/app", "alice", "Bug", "")
	require.NoError(t, err)
	ic, err := w.sim.Comment("alice/app", issue, "alice", "an issue comment")
	require.NoError(t, err)

	for _, tc := range []struct {
		name    string
		user    string // "" = anonymous
		repo    string
		id      int64
		content string
		status  int
	}{
		{"new reaction", "bot", "alice/app", rcID, "eyes", http.StatusCreated},
		{"same reaction again", "bot", "alice/app", rcID, "eyes", http.StatusOK},
		{"another kind", "bot", "alice/app", rcID, "rocket", http.StatusCreated},
		{"another user", "alice", "alice/app", rcID, "eyes", http.StatusCreated},
		{"invalid content", "bot", "alice/app", rcID, "party", http.StatusUnprocessableEntity},
		{"anonymous", "", "alice/app", rcID, "eyes", http.StatusUnauthorized},
		{"unknown id", "bot", "alice/app", 999999, "eyes", http.StatusNotFound},
		{"issue comment id is not a review comment", "bot", "alice/app", ic.GetID(), "eyes", http.StatusNotFound},
		{"comment of another repo", "bot", "acme/control", rcID, "eyes", http.StatusNotFound},
		{"private repo hidden", "mallory", "alice/secret", secretRC, "eyes", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := w.anon
			if tc.user != "" {
				gh = w.gh[tc.user]
			}
			owner, name, _ := strings.Cut(tc.repo, "/")
			r, resp, err := gh.Reactions.CreatePullRequestCommentReaction(ctx, owner, name, tc.id, tc.content)
			if tc.status >= 400 {
				assert.Equal(t, tc.status, statusOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.content, r.GetContent())
			assert.Equal(t, tc.user, r.GetUser().GetLogin())
		})
	}

	assert.Equal(t, []string{"eyes", "rocket", "eyes"}, w.sim.ReviewCommentReactions("alice/app", rcID))
	assert.Nil(t, w.sim.ReviewCommentReactions("acme/control", rcID), "wrong repo")
	assert.Nil(t, w.sim.ReviewCommentReactions("alice/app", ic.GetID()), "issue comment")
	assert.Empty(t, w.sim.Reactions("alice/app", rcID), "Reactions covers issue comments only")

	list, _, err := w.gh["bot"].Reactions.ListPullRequestCommentReactions(ctx, "alice", "app", rcID, nil)
	require.NoError(t, err)
	assert.Len(t, list, 3)
	// go-github v62 has no content filter for this list; ask for it directly.
	req, err := w.gh["bot"].NewRequest("GET", fmt.Sprintf("repos/alice/app/pulls/comments/%d/reactions?content=eyes", rcID), nil)
	require.NoError(t, err)
	var eyes []*github.Reaction
	_, err = w.gh["bot"].Do(ctx, req, &eyes)
	require.NoError(t, err)
	assert.Len(t, eyes, 2)

	rcs, _, err := w.gh["bot"].PullRequests.ListComments(ctx, "alice", "app", pr, nil)
	require.NoError(t, err)
	require.Len(t, rcs, 1)
	require.NotNil(t, rcs[0].Reactions)
	assert.Equal(t, 3, rcs[0].Reactions.GetTotalCount())
	assert.Equal(t, 1, rcs[0].Reactions.GetRocket())
}
