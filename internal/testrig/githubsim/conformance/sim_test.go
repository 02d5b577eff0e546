package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// simWorld is a seeded simulator with one recording go-github client per user.
type simWorld struct {
	sim     *githubsim.Sim
	base    *url.URL
	rec     *Recorder
	clients map[string]*github.Client
}

func newSimWorld(t *testing.T) *simWorld {
	t.Helper()
	sim, baseURL := simfixture.Start(t, githubsim.Options{Seed: 1})
	base, err := url.Parse(baseURL)
	require.NoError(t, err)

	sim.AddUser("alice")
	sim.AddUser("bot")
	sim.AddUser("mallory")
	sim.AddOrg("acme", "alice")
	w := &simWorld{sim: sim, base: base, rec: &Recorder{}, clients: map[string]*github.Client{}}
	for _, login := range []string{"alice", "bot", "mallory"} {
		sim.AddToken("tok-"+login, login)
		c := github.NewClient(&http.Client{Transport: w.rec, Timeout: 10 * time.Second}).WithAuthToken("tok-" + login)
		c.BaseURL = base
		w.clients[login] = c
	}
	_, err = sim.AddRepo("alice/app", false)
	require.NoError(t, err)
	_, err = sim.AddRepo("acme/control", true)
	require.NoError(t, err)
	sim.SetPermission("alice/app", "bot", "write")
	sim.SetPermission("acme/control", "bot", "write")
	return w
}

// accepted treats go-github's AcceptedError (HTTP 202) as success.
func accepted(err error) error {
	var a *github.AcceptedError
	if errors.As(err, &a) {
		return nil
	}
	return err
}

// status returns the HTTP status of a go-github error response, or 0.
func status(err error) int {
	var e *github.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}

// drive calls every operation mention-runner uses, including the error
// answers it relies on, through the real go-github client.
func (w *simWorld) drive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice, bot, mallory := w.clients["alice"], w.clients["bot"], w.clients["mallory"]

	issue, err := w.sim.CreateIssue("alice/app", "alice", "Typo in README", "@bot please fix the typo")
	require.NoError(t, err)
	prDiff := "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n"
	pr, err := w.sim.CreatePR("alice/app", "alice", "Add hello", "@bot review this", "feature", "main", prDiff)
	require.NoError(t, err)
	trigger, err := w.sim.Comment("alice/app", issue, "alice", "@bot fix it")
	require.NoError(t, err)

	// Identity and permissions.
	_, _, err = bot.Users.Get(ctx, "")
	assert.NoError(t, err, "GET /user")
	_, _, err = bot.Users.Get(ctx, "alice")
	assert.NoError(t, err, "GET /users/alice")
	_, _, err = bot.Repositories.Get(ctx, "alice", "app")
	assert.NoError(t, err, "GET /repos")
	_, _, err = mallory.Repositories.Get(ctx, "acme", "control")
	assert.Equal(t, http.StatusNotFound, status(err), "private repo hidden: %v", err)
	_, _, err = bot.Repositories.GetPermissionLevel(ctx, "acme", "control", "bot")
	assert.NoError(t, err, "GET permission")
	_, _, err = alice.Organizations.GetOrgMembership(ctx, "alice", "acme")
	assert.NoError(t, err, "GET membership")
	_, _, err = alice.Organizations.GetOrgMembership(ctx, "mallory", "acme")
	assert.Equal(t, http.StatusNotFound, status(err), "non-member: %v", err)

	// Issues and comments on the target thread.
	_, _, err = bot.Issues.Get(ctx, "alice", "app", issue)
	assert.NoError(t, err, "GET issue")
	_, _, err = bot.Issues.ListByRepo(ctx, "alice", "app", &github.IssueListByRepoOptions{State: "all", ListOptions: github.ListOptions{PerPage: 1}})
	assert.NoError(t, err, "GET issues")
	since := time.Now().Add(-time.Hour)
	_, _, err = bot.Issues.ListComments(ctx, "alice", "app", issue, &github.IssueListCommentsOptions{Since: &since, ListOptions: github.ListOptions{PerPage: 100}})
	assert.NoError(t, err, "GET comments")
	_, _, err = bot.Issues.GetComment(ctx, "alice", "app", trigger.GetID())
	assert.NoError(t, err, "GET comment")
	for i := range 2 { // 201 for a new reaction, 200 when it already exists
		_, _, err = bot.Reactions.CreateIssueCommentReaction(ctx, "alice", "app", trigger.GetID(), "eyes")
		assert.NoError(t, err, "POST reaction %d", i)
	}
	reply, _, err := bot.Issues.CreateComment(ctx, "alice", "app", issue, &github.IssueComment{Body: github.String("On it.")})
	require.NoError(t, err, "POST comment")
	_, _, err = bot.Issues.EditComment(ctx, "alice", "app", reply.GetID(), &github.IssueComment{Body: github.String("Done.")})
	assert.NoError(t, err, "PATCH comment")
	_, _, err = bot.Issues.CreateComment(ctx, "alice", "app", issue, &github.IssueComment{Body: github.String(strings.Repeat("x", 65537))})
	assert.Equal(t, http.StatusUnprocessableEntity, status(err), "too long: %v", err)

	// Pull requests.
	_, _, err = bot.PullRequests.Get(ctx, "alice", "app", pr)
	assert.NoError(t, err, "GET pull")
	diff, _, err := bot.PullRequests.GetRaw(ctx, "alice", "app", pr, github.RawOptions{Type: github.Diff})
	assert.NoError(t, err, "GET pull diff")
	assert.Contains(t, diff, "hello.txt")
	_, _, err = bot.PullRequests.ListReviews(ctx, "alice", "app", pr, &github.ListOptions{PerPage: 100})
	assert.NoError(t, err, "GET reviews")
	reviewComment, err := w.sim.AddReviewComment("alice/app", pr, 0, "alice", "hello.txt", 1, "@bot rename this")
	require.NoError(t, err)
	_, _, err = bot.PullRequests.ListComments(ctx, "alice", "app", pr, &github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}})
	assert.NoError(t, err, "GET review comments")
	for i := range 2 { // 201 new, 200 existing, as for issue comments
		_, _, err = bot.Reactions.CreatePullRequestCommentReaction(ctx, "alice", "app", reviewComment, "eyes")
		assert.NoError(t, err, "POST review comment reaction %d", i)
	}

	// Notifications: the mentions above reach the bot.
	threads, _, err := bot.Activity.ListNotifications(ctx, &github.NotificationListOptions{All: true, ListOptions: github.ListOptions{PerPage: 50}})
	assert.NoError(t, err, "GET notifications")
	if assert.NotEmpty(t, threads, "the bot was mentioned") {
		_, err = bot.Activity.MarkThreadRead(ctx, threads[0].GetID())
		assert.NoError(t, err, "PATCH thread")
	}

	// Dispatch to the control repo.
	payload := json.RawMessage(`{"jobid":"6f1c0f8e-6a47-5d0e-9a1e-3c1b8c7f0a11","context_b64":"e30=","timestamp":"2024-01-02T03:04:05Z"}`)
	_, _, err = bot.Repositories.Dispatch(ctx, "acme", "control", github.DispatchRequestOptions{EventType: "agent_small", ClientPayload: &payload})
	assert.NoError(t, err, "POST dispatches")

	// Shard storage through git data, and the lock race.
	blob, _, err := bot.Git.CreateBlob(ctx, "acme", "control", &github.Blob{Content: github.String(base64.StdEncoding.EncodeToString([]byte("e30="))), Encoding: github.String("base64")})
	require.NoError(t, err, "POST blob")
	tree, _, err := bot.Git.CreateTree(ctx, "acme", "control", "", []*github.TreeEntry{{Path: github.String("shard"), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA}})
	require.NoError(t, err, "POST tree")
	commit, _, err := bot.Git.CreateCommit(ctx, "acme", "control", &github.Commit{Message: github.String("shard 0"), Tree: tree}, nil)
	require.NoError(t, err, "POST commit")
	const jobRefs = "refs/mention-runner/jobs/6f1c0f8e-6a47-5d0e-9a1e-3c1b8c7f0a11"
	ref := &github.Reference{Ref: github.String(jobRefs + "/shards/0"), Object: &github.GitObject{SHA: commit.SHA}}
	_, _, err = bot.Git.CreateRef(ctx, "acme", "control", ref)
	assert.NoError(t, err, "POST ref")
	_, _, err = bot.Git.CreateRef(ctx, "acme", "control", ref)
	assert.Equal(t, http.StatusUnprocessableEntity, status(err), "ref exists: %v", err)
	_, _, err = bot.Git.ListMatchingRefs(ctx, "acme", "control", &github.ReferenceListOptions{Ref: strings.TrimPrefix(jobRefs, "refs/")})
	assert.NoError(t, err, "GET matching-refs")
	_, _, err = bot.Git.GetRef(ctx, "acme", "control", strings.TrimPrefix(jobRefs, "refs/")+"/shards/0")
	assert.NoError(t, err, "GET ref")
	// the ref and its commit's message in one answer (the write ledger's read)
	rc, _, err := bot.Repositories.GetCommit(ctx, "acme", "control", jobRefs+"/shards/0", nil)
	assert.NoError(t, err, "GET commits/{ref}")
	assert.Equal(t, "shard 0", rc.GetCommit().GetMessage())
	_, _, err = bot.Repositories.GetCommit(ctx, "acme", "control", jobRefs+"/shards/9", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, status(err), "no commit for that ref: %v", err)
	_, err = bot.Git.DeleteRef(ctx, "acme", "control", strings.TrimPrefix(jobRefs, "refs/")+"/shards/0")
	assert.NoError(t, err, "DELETE ref")
	_, _, err = bot.Git.GetRef(ctx, "acme", "control", strings.TrimPrefix(jobRefs, "refs/")+"/shards/0")
	assert.Equal(t, http.StatusNotFound, status(err), "deleted ref: %v", err)

	// A branch for the agent's PR, built the same way, then the PR.
	main, _, err := bot.Git.GetRef(ctx, "alice", "app", "heads/main")
	require.NoError(t, err, "GET main")
	fix, _, err := bot.Git.CreateTree(ctx, "alice", "app", "", []*github.TreeEntry{{Path: github.String("README.md"), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String("fixed\n")}})
	require.NoError(t, err, "POST tree with content")
	fixCommit, _, err := bot.Git.CreateCommit(ctx, "alice", "app", &github.Commit{Message: github.String("Fix typo"), Tree: fix, Parents: []*github.Commit{{SHA: main.Object.SHA}}}, nil)
	require.NoError(t, err, "POST commit with parent")
	_, _, err = bot.Git.CreateRef(ctx, "alice", "app", &github.Reference{Ref: github.String("refs/heads/bot/fix"), Object: &github.GitObject{SHA: fixCommit.SHA}})
	require.NoError(t, err, "POST branch ref")
	_, _, err = bot.PullRequests.Create(ctx, "alice", "app", &github.NewPullRequest{Title: github.String("Fix typo"), Head: github.String("bot/fix"), Base: github.String("main"), Body: github.String("Fixes the typo.")})
	assert.NoError(t, err, "POST pull")
	_, _, err = bot.PullRequests.Create(ctx, "alice", "app", &github.NewPullRequest{Title: github.String("x"), Head: github.String("no-such-branch"), Base: github.String("main")})
	assert.Equal(t, http.StatusUnprocessableEntity, status(err), "missing head: %v", err)

	// The run-log issue in the control repo.
	logIssue, _, err := bot.Issues.Create(ctx, "acme", "control", &github.IssueRequest{Title: github.String("Run log"), Body: github.String("Created Comments:\n- (none)\n"), Labels: &[]string{"mention-runner"}})
	require.NoError(t, err, "POST issue")
	// go-github's AddLabelsToIssue sends a bare JSON array, which GitHub's
	// current spec does not document (see TestCheck); send the documented
	// {"labels": […]} form as the project's client must.
	req, err := bot.NewRequest("POST", fmt.Sprintf("repos/acme/control/issues/%d/labels", logIssue.GetNumber()), map[string][]string{"labels": {"failed"}})
	require.NoError(t, err)
	_, err = bot.Do(ctx, req, &[]*github.Label{})
	assert.NoError(t, err, "POST labels")
	_, _, err = bot.Issues.Edit(ctx, "acme", "control", logIssue.GetNumber(), &github.IssueRequest{State: github.String("closed"), StateReason: github.String("completed")})
	assert.NoError(t, err, "PATCH issue")

	// A fork for when the bot cannot push to the target.
	_, _, err = bot.Repositories.CreateFork(ctx, "alice", "app", &github.RepositoryCreateForkOptions{})
	assert.NoError(t, accepted(err), "POST forks")

	// The blocklist file: missing, created, updated, and a stale update.
	_, _, _, err = bot.Repositories.GetContents(ctx, "acme", "control", "blocklist.json", nil)
	assert.Equal(t, http.StatusNotFound, status(err), "missing file: %v", err)
	created, _, err := bot.Repositories.CreateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("blocklist: create"), Content: []byte("[]\n")})
	require.NoError(t, err, "PUT contents create")
	_, _, _, err = bot.Repositories.GetContents(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentGetOptions{Ref: "main"})
	assert.NoError(t, err, "GET contents")
	_, _, err = bot.Repositories.UpdateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("blocklist: add"), Content: []byte("[{}]\n"), SHA: created.Content.SHA})
	assert.NoError(t, err, "PUT contents update")
	_, _, err = bot.Repositories.UpdateFile(ctx, "acme", "control", "blocklist.json", &github.RepositoryContentFileOptions{Message: github.String("blocklist: stale"), Content: []byte("[]\n"), SHA: created.Content.SHA})
	assert.Equal(t, http.StatusConflict, status(err), "stale sha: %v", err)
}

// TestSimulatorConformsToOpenAPI drives the simulator over every operation
// mention-runner uses and validates each request and response against
// GitHub's OpenAPI description. Any violation fails the test; each is
// printed once with the operation, the place and the JSON path.
func TestSimulatorConformsToOpenAPI(t *testing.T) {
	spec := loadSubset(t)
	w := newSimWorld(t)
	w.drive(t)

	covered := map[string]int{}
	seen := map[string]bool{}
	var violations []string
	for _, ex := range w.rec.Exchanges() {
		op, vs := spec.Check(w.base.Path, ex)
		if op != "" {
			covered[op]++
		}
		for _, v := range vs {
			if s := v.String(); !seen[s] {
				seen[s] = true
				violations = append(violations, s)
			}
		}
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Errorf("schema violation: %s", v)
	}
	t.Logf("%d exchanges over %d operations, %d distinct violations", len(w.rec.Exchanges()), len(covered), len(violations))
	for _, op := range usedOperations {
		assert.Positive(t, covered[op], "operation %s was never exercised", op)
	}
}

// TestConformanceCatchesBrokenResponses breaks real simulator answers the way
// a regression would and checks the validator notices, so a green
// conformance run means something.
func TestConformanceCatchesBrokenResponses(t *testing.T) {
	spec := loadSubset(t)
	w := newSimWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := w.clients["bot"].Repositories.Get(ctx, "alice", "app")
	require.NoError(t, err)
	exs := w.rec.Exchanges()
	require.Len(t, exs, 1)
	good := exs[0]
	op, vs := spec.Check(w.base.Path, good)
	require.Equal(t, "GET /repos/{owner}/{repo}", op)
	require.Empty(t, vs)

	cases := []struct {
		name  string
		edit  func(repo map[string]any)
		wants string
	}{
		{"required field dropped", func(r map[string]any) { delete(r, "full_name") }, "$.full_name required property is missing"},
		{"wrong type", func(r map[string]any) { r["private"] = "no" }, `$.private is a string "no", want boolean`},
		{"nested null", func(r map[string]any) { r["owner"] = nil }, "$.owner is null"},
		{"bad timestamp", func(r map[string]any) { r["created_at"] = "yesterday" }, "not an RFC 3339 date-time"},
		{"relative url", func(r map[string]any) { r["html_url"] = "/alice/app" }, "$.html_url \"/alice/app\" is not an absolute URI"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var repo map[string]any
			require.NoError(t, json.Unmarshal(good.RespBody, &repo))
			c.edit(repo)
			bad := good
			bad.RespBody, err = json.Marshal(repo)
			require.NoError(t, err)
			_, vs := spec.Check(w.base.Path, bad)
			require.Len(t, vs, 1, "%v", vs)
			assert.Contains(t, vs[0].String(), c.wants)
		})
	}
}
