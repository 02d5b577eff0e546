package githubsim

import "strings"

// REST reports whether r counts against GitHub's primary limit on REST
// requests: neither git's smart HTTP (clone, fetch, push) nor GraphQL,
// which has a limit of its own.
func REST(r LoggedRequest) bool {
	return !isGitPath(r.Path) && r.Path != "/graphql"
}

// RESTRequests counts the REST requests in reqs per account login (lower
// case), whatever their method or answer; unauthenticated ones are left out.
func RESTRequests(reqs []LoggedRequest) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		if r.Login != "" && REST(r) {
			out[strings.ToLower(r.Login)]++
		}
	}
	return out
}
