package githubsim

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateReviewAgainstTheDiff(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	diff := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"
	pr, err := w.sim.CreatePR("alice/app", "alice", "PR", "", "feature", "main", diff)
	require.NoError(t, err)
	bot := w.gh["bot"]
	req := func(path string, line int, event string) *github.PullRequestReviewRequest {
		return &github.PullRequestReviewRequest{Body: github.String("summary"), Event: github.String(event),
			Comments: []*github.DraftReviewComment{{Path: github.String(path), Line: github.Int(line), Side: github.String("RIGHT"), Body: github.String("c")}}}
	}
	cases := []struct {
		name, path string
		line       int
		event      string
		status     int
	}{
		{"on the diff", "x.go", 2, "COMMENT", http.StatusOK},
		{"line outside the diff", "x.go", 9, "COMMENT", http.StatusUnprocessableEntity},
		{"path not in the diff", "README.md", 1, "COMMENT", http.StatusUnprocessableEntity},
		{"bad event", "x.go", 2, "MERGE", http.StatusUnprocessableEntity},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, resp, err := bot.PullRequests.CreateReview(ctx, "alice", "app", pr, req(c.path, c.line, c.event))
			require.NotNil(t, resp, "%v", err)
			assert.Equal(t, c.status, resp.StatusCode, "%v", err)
		})
	}
	rs := w.sim.Reviews("alice/app", pr)
	require.Len(t, rs, 1)
	assert.Equal(t, "COMMENTED", rs[0].State)
	assert.Equal(t, []ReviewCommentSummary{{Path: "x.go", Line: 2, Body: "c"}}, rs[0].Comments)
	listed, _, err := bot.PullRequests.ListReviews(ctx, "alice", "app", pr, nil)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Contains(t, listed[0].GetHTMLURL(), "#pullrequestreview-")
	_, resp, err := w.gh["mallory"].PullRequests.CreateReview(ctx, "alice", "secret", 1, req("x.go", 2, "COMMENT"))
	require.Error(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestRepositoryAndIssueLabels(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	require.NoError(t, w.sim.CreateLabel("alice/app", "bug", "d73a4a"))
	n, err := w.sim.CreateIssue("alice/app", "alice", "t", "b")
	require.NoError(t, err)
	bot := w.gh["bot"]
	ls, _, err := bot.Issues.ListLabels(ctx, "alice", "app", nil)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	assert.Equal(t, "bug", ls[0].GetName())
	_, _, err = bot.Issues.AddLabelsToIssue(ctx, "alice", "app", n, []string{"bug"})
	require.NoError(t, err)
	assert.Equal(t, []string{"bug"}, w.sim.IssueLabels("alice/app", n))
	resp, err := bot.Issues.RemoveLabelForIssue(ctx, "alice", "app", n, "absent")
	require.Error(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "removing a label the issue lacks is 404, as on GitHub")
	_, err = bot.Issues.RemoveLabelForIssue(ctx, "alice", "app", n, "bug")
	require.NoError(t, err)
	assert.Empty(t, w.sim.IssueLabels("alice/app", n))
	_, resp, err = w.gh["mallory"].Issues.ListLabels(ctx, "alice", "secret", nil)
	require.Error(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
