package githubsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsersReposAndPermissions(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	me, _, err := w.gh["bot"].Users.Get(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, "bot", me.GetLogin())
	assert.Equal(t, "User", me.GetType())
	org, _, err := w.gh["bot"].Users.Get(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, "Organization", org.GetType())
	_, _, err = w.gh["bot"].Users.Get(ctx, "nobody")
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	_, _, err = w.anon.Users.Get(ctx, "")
	assert.Equal(t, http.StatusUnauthorized, statusOf(err))

	repo, _, err := w.gh["bot"].Repositories.Get(ctx, "alice", "app")
	require.NoError(t, err)
	assert.Equal(t, "alice/app", repo.GetFullName())
	assert.Equal(t, w.base+"alice/app.git", repo.GetCloneURL())
	assert.Equal(t, "main", repo.GetDefaultBranch())
	assert.True(t, repo.GetPermissions()["push"])
	assert.False(t, repo.GetPermissions()["admin"])
	assert.True(t, strings.HasPrefix(repo.GetHTMLURL(), w.base))

	for _, tc := range []struct {
		repo, user, perm, role string
	}{
		{"alice/app", "alice", "admin", "admin"},
		{"alice/app", "bot", "write", "write"},
		{"alice/app", "mallory", "read", "read"},
		{"alice/secret", "mallory", "none", "none"},
		{"acme/control", "alice", "admin", "admin"},
	} {
		o, r, _ := strings.Cut(tc.repo, "/")
		p, _, err := w.gh["bot"].Repositories.GetPermissionLevel(ctx, o, r, tc.user)
		require.NoError(t, err, tc)
		assert.Equal(t, tc.perm, p.GetPermission(), tc)
		assert.Equal(t, tc.user, p.GetUser().GetLogin(), tc)
	}
	w.sim.SetPermission("alice/app", "mallory", "maintain")
	p, _, err := w.gh["bot"].Repositories.GetPermissionLevel(ctx, "alice", "app", "mallory")
	require.NoError(t, err)
	assert.Equal(t, "write", p.GetPermission(), "legacy name for maintain")
	assert.Equal(t, "maintain", p.GetUser().GetRoleName())

	m, _, err := w.gh["alice"].Organizations.GetOrgMembership(ctx, "alice", "acme")
	require.NoError(t, err)
	assert.Equal(t, "admin", m.GetRole())
	assert.Equal(t, "active", m.GetState())
	_, _, err = w.gh["alice"].Organizations.GetOrgMembership(ctx, "mallory", "acme")
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	_, _, err = w.gh["mallory"].Organizations.GetOrgMembership(ctx, "alice", "acme")
	assert.Equal(t, http.StatusForbidden, statusOf(err), "non-members cannot look")
	w.sim.AddOrgMember("acme", "bot", "member")
	m, _, err = w.gh["bot"].Organizations.GetOrgMembership(ctx, "bot", "acme")
	require.NoError(t, err)
	assert.Equal(t, "member", m.GetRole())
}

func TestAuthAndPrivacy(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	for _, tc := range []struct {
		name   string
		client *github.Client
		owner  string
		repo   string
		status int
	}{
		{"bad token", w.client("nope"), "alice", "app", http.StatusUnauthorized},
		{"anonymous public", w.anon, "alice", "app", 0},
		{"anonymous private", w.anon, "alice", "secret", http.StatusNotFound},
		{"stranger private", w.gh["mallory"], "alice", "secret", http.StatusNotFound},
		{"collaborator private", w.gh["bot"], "alice", "secret", 0},
		{"missing", w.gh["bot"], "alice", "nope", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.client.Repositories.Get(ctx, tc.owner, tc.repo)
			assert.Equal(t, tc.status, statusOf(err), "%v", err)
			if tc.status == http.StatusUnauthorized {
				var er *github.ErrorResponse
				require.ErrorAs(t, err, &er)
				assert.Equal(t, "Bad credentials", er.Message)
			}
		})
	}
	// Writes without permission.
	_, _, err := w.gh["mallory"].Git.CreateRef(ctx, "alice", "app", &github.Reference{Ref: github.String("refs/heads/x"), Object: &github.GitObject{SHA: github.String(strings.Repeat("a", 40))}})
	assert.Equal(t, http.StatusForbidden, statusOf(err))
	_, _, err = w.anon.Issues.CreateComment(ctx, "alice", "app", 1, &github.IssueComment{Body: github.String("x")})
	assert.Equal(t, http.StatusUnauthorized, statusOf(err))
}

func TestIssuesCommentsLabelsReactions(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	bot, alice, mallory := w.gh["bot"], w.gh["alice"], w.gh["mallory"]

	is, resp, err := mallory.Issues.Create(ctx, "alice", "app", &github.IssueRequest{Title: github.String("Bug"), Body: github.String("it breaks"), Labels: &[]string{"bug"}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Empty(t, is.Labels, "labels from users without push access are dropped")
	assert.Equal(t, 1, is.GetNumber())
	assert.Equal(t, "mallory", is.GetUser().GetLogin())

	_, _, err = bot.Issues.Create(ctx, "alice", "app", &github.IssueRequest{Title: github.String("")})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))

	logIssue, _, err := bot.Issues.Create(ctx, "acme", "control", &github.IssueRequest{Title: github.String("Run log"), Labels: &[]string{"mention-runner"}})
	require.NoError(t, err)
	require.Len(t, logIssue.Labels, 1)
	assert.Equal(t, "mention-runner", logIssue.Labels[0].GetName())

	labels, _, err := bot.Issues.AddLabelsToIssue(ctx, "acme", "control", logIssue.GetNumber(), []string{"failed"})
	require.NoError(t, err)
	assert.Len(t, labels, 2)
	l, _, err := bot.Issues.GetLabel(ctx, "acme", "control", "failed")
	require.NoError(t, err)
	assert.Equal(t, "failed", l.GetName())
	_, _, err = bot.Issues.CreateLabel(ctx, "acme", "control", &github.Label{Name: github.String("failed")})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))
	nl, resp, err := bot.Issues.CreateLabel(ctx, "acme", "control", &github.Label{Name: github.String("loop"), Color: github.String("ff0000")})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "ff0000", nl.GetColor())
	_, _, err = bot.Issues.GetLabel(ctx, "acme", "control", "absent")
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	_, err = bot.Issues.RemoveLabelForIssue(ctx, "acme", "control", logIssue.GetNumber(), "failed")
	require.NoError(t, err)

	closed, _, err := bot.Issues.Edit(ctx, "acme", "control", logIssue.GetNumber(), &github.IssueRequest{State: github.String("closed"), StateReason: github.String("completed")})
	require.NoError(t, err)
	assert.Equal(t, "closed", closed.GetState())
	assert.Equal(t, "completed", closed.GetStateReason())
	assert.NotNil(t, closed.ClosedAt)
	_, _, err = mallory.Issues.Edit(ctx, "alice", "app", 1, &github.IssueRequest{Title: github.String("mine")})
	require.NoError(t, err, "authors may edit their issue")
	_, _, err = bot.Issues.Edit(ctx, "alice", "app", 1, &github.IssueRequest{State: github.String("weird")})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))

	// Comments: create, since filter, edit, delete, too long.
	c1, resp, err := alice.Issues.CreateComment(ctx, "alice", "app", 1, &github.IssueComment{Body: github.String("first")})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Contains(t, c1.GetHTMLURL(), "#issuecomment-")
	w.now.Advance(time.Hour)
	c2, _, err := bot.Issues.CreateComment(ctx, "alice", "app", 1, &github.IssueComment{Body: github.String("second")})
	require.NoError(t, err)
	since := w.now.Now().Add(-time.Minute)
	list, _, err := bot.Issues.ListComments(ctx, "alice", "app", 1, &github.IssueListCommentsOptions{Since: &since})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, c2.GetID(), list[0].GetID())
	got, _, err := bot.Issues.GetComment(ctx, "alice", "app", c1.GetID())
	require.NoError(t, err)
	assert.Equal(t, "first", got.GetBody())
	_, _, err = mallory.Issues.EditComment(ctx, "alice", "app", c2.GetID(), &github.IssueComment{Body: github.String("hijack")})
	assert.Equal(t, http.StatusForbidden, statusOf(err))
	ed, _, err := bot.Issues.EditComment(ctx, "alice", "app", c2.GetID(), &github.IssueComment{Body: github.String("edited")})
	require.NoError(t, err)
	assert.Equal(t, "edited", ed.GetBody())
	_, err = bot.Issues.DeleteComment(ctx, "alice", "app", c2.GetID())
	require.NoError(t, err)
	_, _, err = bot.Issues.GetComment(ctx, "alice", "app", c2.GetID())
	assert.Equal(t, http.StatusNotFound, statusOf(err))

	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"exactly 65536 runes", strings.Repeat("é", 65536), http.StatusCreated},
		{"65537 runes", strings.Repeat("x", 65537), http.StatusUnprocessableEntity},
	} {
		_, resp, err := bot.Issues.CreateComment(ctx, "alice", "app", 1, &github.IssueComment{Body: github.String(tc.body)})
		if tc.status == http.StatusCreated {
			require.NoError(t, err, tc.name)
			assert.Equal(t, tc.status, resp.StatusCode, tc.name)
			continue
		}
		assert.Equal(t, tc.status, statusOf(err), tc.name)
		var er *github.ErrorResponse
		require.ErrorAs(t, err, &er)
		require.NotEmpty(t, er.Errors)
		assert.Equal(t, "Body is too long (maximum is 65536 characters)", er.Errors[0].Message)
	}

	// Reactions: 201 new, 200 existing, 422 invalid.
	_, resp, err = bot.Reactions.CreateIssueCommentReaction(ctx, "alice", "app", c1.GetID(), "eyes")
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	_, resp, err = bot.Reactions.CreateIssueCommentReaction(ctx, "alice", "app", c1.GetID(), "eyes")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, _, err = bot.Reactions.CreateIssueCommentReaction(ctx, "alice", "app", c1.GetID(), "party")
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))
	rs, _, err := bot.Reactions.ListIssueCommentReactions(ctx, "alice", "app", c1.GetID(), nil)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, []string{"eyes"}, w.sim.Reactions("alice/app", c1.GetID()))
	_, resp, err = bot.Reactions.CreateIssueReaction(ctx, "alice", "app", 1, "+1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)

	// List with filters; PRs are included as GitHub does.
	pr, err := w.sim.CreatePR("alice/app", "alice", "PR", "", "feature", "main", "diff --git a/x b/x\n")
	require.NoError(t, err)
	all, _, err := bot.Issues.ListByRepo(ctx, "alice", "app", &github.IssueListByRepoOptions{State: "all"})
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, pr, all[0].GetNumber(), "newest first")
	assert.True(t, all[0].IsPullRequest())
	mine, _, err := bot.Issues.ListByRepo(ctx, "alice", "app", &github.IssueListByRepoOptions{Creator: "mallory"})
	require.NoError(t, err)
	require.Len(t, mine, 1)
	closedOnly, _, err := bot.Issues.ListByRepo(ctx, "acme", "control", &github.IssueListByRepoOptions{State: "closed", Labels: []string{"mention-runner"}})
	require.NoError(t, err)
	assert.Len(t, closedOnly, 1)

	// Inspection helpers agree with the API.
	inspected, ok := w.sim.Issue("alice", 1)
	assert.False(t, ok)
	assert.Nil(t, inspected)
	inspected, ok = w.sim.Issue("alice/app", 1)
	require.True(t, ok)
	assert.Equal(t, "mine", inspected.GetTitle())
	assert.Len(t, w.sim.Issues("alice/app"), 2)
	assert.Len(t, w.sim.Comments("alice/app", 1), 2)
}

func TestPagination(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	n, err := w.sim.CreateIssue("alice/app", "alice", "busy", "")
	require.NoError(t, err)
	for i := range 7 {
		_, err := w.sim.Comment("alice/app", n, "alice", "c"+string(rune('a'+i)))
		require.NoError(t, err)
	}
	var bodies []string
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 3}}
	pages := 0
	for {
		list, resp, err := w.gh["bot"].Issues.ListComments(ctx, "alice", "app", n, opts)
		require.NoError(t, err)
		pages++
		for _, c := range list {
			bodies = append(bodies, c.GetBody())
		}
		if pages == 1 {
			assert.Equal(t, 2, resp.NextPage)
			assert.Equal(t, 3, resp.LastPage)
			assert.Zero(t, resp.PrevPage)
		}
		if pages == 2 {
			assert.Equal(t, 1, resp.FirstPage)
			assert.Equal(t, 1, resp.PrevPage)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	assert.Equal(t, 3, pages)
	assert.Equal(t, []string{"ca", "cb", "cc", "cd", "ce", "cf", "cg"}, bodies)

	// per_page is capped at 100; beyond the last page is empty.
	list, _, err := w.gh["bot"].Issues.ListComments(ctx, "alice", "app", n, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 500, Page: 2}})
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestPullRequestsAndForks(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	bot := w.gh["bot"]
	diff := "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n"
	n, err := w.sim.CreatePR("alice/app", "alice", "Add hello", "please @bot", "feature", "main", diff)
	require.NoError(t, err)
	_, err = w.sim.AddReview("alice/app", n, "mallory", "COMMENTED", "looks odd")
	require.NoError(t, err)
	_, err = w.sim.AddReviewComment("alice/app", n, 0, "mallory", "hello.txt", 1, "why?")
	require.NoError(t, err)

	pr, _, err := bot.PullRequests.Get(ctx, "alice", "app", n)
	require.NoError(t, err)
	assert.Equal(t, "feature", pr.GetHead().GetRef())
	assert.Equal(t, "main", pr.GetBase().GetRef())
	assert.Equal(t, "alice/app", pr.GetBase().GetRepo().GetFullName())
	assert.Equal(t, 1, pr.GetAdditions())
	raw, _, err := bot.PullRequests.GetRaw(ctx, "alice", "app", n, github.RawOptions{Type: github.Diff})
	require.NoError(t, err)
	assert.Equal(t, diff, raw)
	reviews, _, err := bot.PullRequests.ListReviews(ctx, "alice", "app", n, nil)
	require.NoError(t, err)
	require.Len(t, reviews, 1)
	assert.Equal(t, "COMMENTED", reviews[0].GetState())
	rcs, _, err := bot.PullRequests.ListComments(ctx, "alice", "app", n, nil)
	require.NoError(t, err)
	require.Len(t, rcs, 1)
	assert.Equal(t, "hello.txt", rcs[0].GetPath())
	_, _, err = bot.PullRequests.Get(ctx, "alice", "app", 999)
	assert.Equal(t, http.StatusNotFound, statusOf(err))

	// Fork as mallory: 202, idempotent, listed.
	fork, _, err := w.gh["mallory"].Repositories.CreateFork(ctx, "alice", "app", nil)
	var acc *github.AcceptedError
	require.ErrorAs(t, err, &acc)
	_ = fork
	_, _, err = w.gh["mallory"].Repositories.CreateFork(ctx, "alice", "app", nil)
	require.ErrorAs(t, err, &acc)
	fr, _, err := w.gh["mallory"].Repositories.Get(ctx, "mallory", "app")
	require.NoError(t, err)
	assert.True(t, fr.GetFork())
	assert.Equal(t, "alice/app", fr.GetParent().GetFullName())
	forks, _, err := bot.Repositories.ListForks(ctx, "alice", "app", nil)
	require.NoError(t, err)
	require.Len(t, forks, 1)

	// A PR from the fork's branch (created through git data on the fork).
	ref, _, err := w.gh["mallory"].Git.GetRef(ctx, "mallory", "app", "heads/main")
	require.NoError(t, err)
	tree, _, err := w.gh["mallory"].Git.CreateTree(ctx, "mallory", "app", ref.GetObject().GetSHA(), []*github.TreeEntry{{Path: github.String("fix.txt"), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String("fixed\n")}})
	require.NoError(t, err)
	commit, _, err := w.gh["mallory"].Git.CreateCommit(ctx, "mallory", "app", &github.Commit{Message: github.String("fix"), Tree: tree, Parents: []*github.Commit{{SHA: ref.Object.SHA}}}, nil)
	require.NoError(t, err)
	_, _, err = w.gh["mallory"].Git.CreateRef(ctx, "mallory", "app", &github.Reference{Ref: github.String("refs/heads/fix"), Object: &github.GitObject{SHA: commit.SHA}})
	require.NoError(t, err)
	fpr, resp, err := w.gh["mallory"].PullRequests.Create(ctx, "alice", "app", &github.NewPullRequest{Title: github.String("Fix"), Head: github.String("mallory:fix"), Base: github.String("main")})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "mallory/app", fpr.GetHead().GetRepo().GetFullName())
	assert.Equal(t, commit.GetSHA(), fpr.GetHead().GetSHA())
	assert.Equal(t, 1, fpr.GetChangedFiles())
	fraw, _, err := bot.PullRequests.GetRaw(ctx, "alice", "app", fpr.GetNumber(), github.RawOptions{Type: github.Diff})
	require.NoError(t, err)
	assert.Contains(t, fraw, "+fixed")
	_, _, err = w.gh["mallory"].PullRequests.Create(ctx, "alice", "app", &github.NewPullRequest{Title: github.String("Fix"), Head: github.String("mallory:fix"), Base: github.String("main")})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "duplicate PR")

	for _, tc := range []struct{ head, base string }{{"nope", "main"}, {"feature", "nope"}, {"main", "main"}, {"eve:fix", "main"}} {
		_, _, err := bot.PullRequests.Create(ctx, "alice", "app", &github.NewPullRequest{Title: github.String("x"), Head: github.String(tc.head), Base: github.String(tc.base)})
		assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), "%+v", tc)
	}
}

// AddComments posts in order, as Comment would, and posts nothing when a
// body is refused or the thread does not exist.
func TestAddComments(t *testing.T) {
	w := newWorld(t)
	n, err := w.sim.CreateIssue("alice/app", "alice", "seeded", "")
	require.NoError(t, err)
	tests := []struct {
		name    string
		repo    string
		number  int
		bodies  []string
		wantErr string
		want    []string // every body of the thread afterwards
	}{
		{"in order", "alice/app", n, []string{"one", "two @bot", "three"}, "", []string{"one", "two @bot", "three"}},
		{"none", "alice/app", n, nil, "", []string{"one", "two @bot", "three"}},
		{"a body too long: none posted", "alice/app", n, []string{"four", strings.Repeat("x", maxBodyRunes+1)}, "body is too long", []string{"one", "two @bot", "three"}},
		{"no such repo", "alice/nope", n, []string{"x"}, "does not exist", nil},
		{"no such thread", "alice/app", n + 99, []string{"x"}, "does not exist", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := w.sim.AddComments(tt.repo, tt.number, "alice", tt.bodies...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			if tt.want == nil {
				return
			}
			var got []string
			for _, c := range w.sim.Comments(tt.repo, tt.number) {
				got = append(got, c.GetBody())
				assert.Equal(t, "alice", c.GetUser().GetLogin())
			}
			assert.Equal(t, tt.want, got)
		})
	}
	// the mention in a seeded comment notifies, as Comment's does
	unread := 0
	for _, th := range w.sim.Notifications("bot") {
		if th.GetUnread() {
			unread++
		}
	}
	assert.Positive(t, unread, "the seeded mention notified @bot")
}
