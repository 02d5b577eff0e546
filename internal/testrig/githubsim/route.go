package githubsim

import (
	"strings"
	"sync"
)

// route is one REST endpoint. Segments are literals, "{name}" for one path
// segment or "{name...}" for the rest of the path. First match wins, so
// more specific routes are listed first.
type route struct {
	method string
	segs   []string
	h      func(*call)
}

var (
	routesOnce sync.Once
	routes     []route
)

func buildRoutes() {
	add := func(method, pattern string, h func(*call)) {
		routes = append(routes, route{method: method, segs: strings.Split(strings.Trim(pattern, "/"), "/"), h: h})
	}
	add("GET", "/user", (*call).getAuthUser)
	add("POST", "/graphql", (*call).graphql)
	add("GET", "/users/{user}", (*call).getUser)
	add("GET", "/orgs/{org}/memberships/{user}", (*call).getMembership)
	add("GET", "/notifications", (*call).listNotifications)
	add("GET", "/notifications/threads/{id}", (*call).getThread)
	add("PATCH", "/notifications/threads/{id}", (*call).markThreadRead)
	add("PUT", "/notifications", (*call).markNotificationsRead)

	r := "/repos/{owner}/{repo}"
	add("GET", r, (*call).getRepo)
	add("GET", r+"/collaborators/{user}/permission", (*call).getPermission)
	add("POST", r+"/dispatches", (*call).createDispatch)
	add("PUT", r+"/notifications", (*call).markRepoNotificationsRead)
	add("POST", r+"/forks", (*call).createFork)
	add("GET", r+"/forks", (*call).listForks)

	add("GET", r+"/issues/comments/{id}/reactions", (*call).listCommentReactions)
	add("POST", r+"/issues/comments/{id}/reactions", (*call).createCommentReaction)
	add("GET", r+"/issues/comments/{id}", (*call).getComment)
	add("PATCH", r+"/issues/comments/{id}", (*call).editComment)
	add("DELETE", r+"/issues/comments/{id}", (*call).deleteComment)
	add("GET", r+"/issues", (*call).listIssues)
	add("POST", r+"/issues", (*call).createIssue)
	add("GET", r+"/issues/{number}", (*call).getIssue)
	add("PATCH", r+"/issues/{number}", (*call).editIssue)
	add("GET", r+"/issues/{number}/comments", (*call).listComments)
	add("POST", r+"/issues/{number}/comments", (*call).createComment)
	add("POST", r+"/issues/{number}/reactions", (*call).createIssueReaction)
	add("GET", r+"/issues/{number}/reactions", (*call).listIssueReactions)
	add("GET", r+"/issues/{number}/labels", (*call).listIssueLabels)
	add("POST", r+"/issues/{number}/labels", (*call).addIssueLabels)
	add("DELETE", r+"/issues/{number}/labels/{name...}", (*call).removeIssueLabel)
	add("POST", r+"/labels", (*call).createLabel)
	add("GET", r+"/labels", (*call).listRepoLabels)
	add("GET", r+"/labels/{name...}", (*call).getLabel)

	add("GET", r+"/pulls/comments/{id}/reactions", (*call).listReviewCommentReactions)
	add("POST", r+"/pulls/comments/{id}/reactions", (*call).createReviewCommentReaction)
	add("GET", r+"/pulls/{number}", (*call).getPull)
	add("POST", r+"/pulls", (*call).createPull)
	add("GET", r+"/pulls/{number}/reviews", (*call).listReviews)
	add("POST", r+"/pulls/{number}/reviews", (*call).createReview)
	add("GET", r+"/pulls/{number}/comments", (*call).listReviewComments)
	add("GET", r+"/compare/{basehead...}", (*call).compareDiff)

	add("POST", r+"/git/blobs", (*call).createBlob)
	add("GET", r+"/git/blobs/{sha}", (*call).getBlob)
	add("POST", r+"/git/trees", (*call).createTree)
	add("GET", r+"/git/trees/{sha}", (*call).getTree)
	add("POST", r+"/git/commits", (*call).createCommit)
	add("GET", r+"/git/commits/{sha}", (*call).getCommit)
	add("GET", r+"/commits/{ref...}", (*call).getRepoCommit)
	add("GET", r+"/git/ref/{ref...}", (*call).getRef)
	add("GET", r+"/git/matching-refs/{ref...}", (*call).matchingRefs)
	add("POST", r+"/git/refs", (*call).createRef)
	add("PATCH", r+"/git/refs/{ref...}", (*call).updateRef)
	add("DELETE", r+"/git/refs/{ref...}", (*call).deleteRef)
	add("GET", r+"/contents/{path...}", (*call).getContents)
	add("GET", r+"/contents", (*call).getContents)
	add("PUT", r+"/contents/{path...}", (*call).putContents)
}

// route finds the handler for method and path, with its parameters.
func (s *Sim) route(method, p string) (func(*call), map[string]string) {
	routesOnce.Do(buildRoutes)
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, rt := range routes {
		if rt.method != method {
			continue
		}
		if params, ok := matchSegs(rt.segs, segs); ok {
			return rt.h, params
		}
	}
	return nil, nil
}

func matchSegs(pattern, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, ps := range pattern {
		if strings.HasPrefix(ps, "{") && strings.HasSuffix(ps, "...}") {
			if i >= len(segs) {
				return nil, false
			}
			params[ps[1:len(ps)-4]] = strings.Join(segs[i:], "/")
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		if strings.HasPrefix(ps, "{") {
			if segs[i] == "" {
				return nil, false
			}
			params[ps[1:len(ps)-1]] = segs[i]
			continue
		}
		if ps != segs[i] {
			return nil, false
		}
	}
	// Tolerate one trailing slash.
	return params, len(pattern) == len(segs) || len(segs) == len(pattern)+1 && segs[len(segs)-1] == ""
}
