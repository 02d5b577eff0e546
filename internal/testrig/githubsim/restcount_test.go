package githubsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRESTRequests(t *testing.T) {
	reqs := []LoggedRequest{
		{Login: "Bot", Method: "GET", Path: "/repos/o/r/issues/1"},
		{Login: "bot", Method: "POST", Path: "/repos/o/r/issues/1/comments", Status: 403},
		{Login: "bot", Method: "GET", Path: "/notifications", Status: 304},
		{Login: "bot", Method: "POST", Path: "/o/r.git/git-receive-pack"},
		{Login: "bot", Method: "POST", Path: "/o/r.git/git-upload-pack"},
		{Login: "bot", Method: "GET", Path: "/o/r.git/info/refs"},
		{Login: "bot", Method: "POST", Path: "/graphql"},
		{Login: "github-actions", Method: "PATCH", Path: "/repos/o/control/issues/2"},
		{Method: "GET", Path: "/repos/o/r"},
	}
	assert.Equal(t, map[string]int{"bot": 3, "github-actions": 1}, RESTRequests(reqs))
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/repos/o/r.git-tools/git/refs", true},
		{"/repos/o/r/git/refs/heads/main", true},
		{"/o/r.git/info/refs", false},
		{"/graphql", false},
	} {
		assert.Equal(t, tc.want, REST(LoggedRequest{Path: tc.path}), tc.path)
	}
}
