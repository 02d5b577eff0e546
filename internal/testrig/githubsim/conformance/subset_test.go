package conformance

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// usedOperations are the GitHub REST operations mention-runner calls; the
// subset must hold exactly these and the simulator test must drive each.
// Keep in sync with OPERATIONS in scripts/fixtures/extract-openapi.mjs.
var usedOperations = []string{
	"DELETE /repos/{owner}/{repo}/git/refs/{ref}",
	"GET /notifications",
	"GET /orgs/{org}/memberships/{username}",
	"GET /repos/{owner}/{repo}",
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission",
	"GET /repos/{owner}/{repo}/commits/{ref}",
	"GET /repos/{owner}/{repo}/contents/{path}",
	"GET /repos/{owner}/{repo}/git/matching-refs/{ref}",
	"GET /repos/{owner}/{repo}/git/ref/{ref}",
	"GET /repos/{owner}/{repo}/issues",
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"GET /repos/{owner}/{repo}/issues/{issue_number}",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
	"GET /user",
	"GET /users/{username}",
	"PATCH /notifications/threads/{thread_id}",
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"PATCH /repos/{owner}/{repo}/issues/{issue_number}",
	"POST /repos/{owner}/{repo}/dispatches",
	"POST /repos/{owner}/{repo}/forks",
	"POST /repos/{owner}/{repo}/git/blobs",
	"POST /repos/{owner}/{repo}/git/commits",
	"POST /repos/{owner}/{repo}/git/refs",
	"POST /repos/{owner}/{repo}/git/trees",
	"POST /repos/{owner}/{repo}/issues",
	"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
	"POST /repos/{owner}/{repo}/pulls",
	"POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions",
	"PUT /repos/{owner}/{repo}/contents/{path}",
}

func loadSubset(t testing.TB) *Spec {
	t.Helper()
	s, err := Load(filepath.Join("testdata", "openapi-subset.json"))
	require.NoError(t, err)
	return s
}
