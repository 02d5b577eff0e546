package contract

import "strings"

// DefaultServerURL is github.com's web address.
const DefaultServerURL = "https://github.com"

// WorkflowRunURL is the web address of a workflow run; "" when repo or
// runID is unknown.
func WorkflowRunURL(serverURL, repo, runID string) string {
	if repo == "" || runID == "" {
		return ""
	}
	if serverURL == "" {
		serverURL = DefaultServerURL
	}
	return strings.TrimSuffix(serverURL, "/") + "/" + repo + "/actions/runs/" + runID
}
