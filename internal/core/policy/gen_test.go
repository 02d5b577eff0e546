package policy

import (
	"math/rand"
	"strconv"
)

// Generators for the property tests: small pools so that repos, threads and
// limits collide often.

var genRepos = []string{"owner/name", "Owner/Name", "foo/bar", "FOO/Bar", "a/b", "c/d", "a/z"}

func genWord(r *rand.Rand) string {
	switch r.Intn(9) {
	case 0:
		return "comment-only"
	case 1:
		return "here-only"
	case 2:
		return "no-issue"
	case 3:
		return "no-pr"
	case 4:
		return "repo=" + genRepos[r.Intn(len(genRepos))]
	case 5:
		return "deny=" + genRepos[r.Intn(len(genRepos))]
	}
	name := []string{"issue-limit", "pr-limit", "comment-limit"}[r.Intn(3)]
	return name + "=" + strconv.Itoa(genLimit(r))
}

func genLimit(r *rand.Rand) int {
	if r.Intn(8) == 0 {
		return r.Intn(MaxLimit + 1)
	}
	return r.Intn(4)
}

func genWords(r *rand.Rand) []string {
	w := make([]string, 1+r.Intn(5))
	for i := range w {
		w[i] = genWord(r)
	}
	return w
}

func genCeilings(r *rand.Rand) Ceilings {
	return Ceilings{CommentLimit: genLimit(r), IssueLimit: genLimit(r), PRLimit: genLimit(r), MaxWrites: genLimit(r)}
}

func genBlocker(r *rand.Rand) Blocker {
	switch r.Intn(3) {
	case 0:
		return nil
	case 1:
		return fakeBlocker{"c/d": true}
	}
	return fakeBlocker{"a/*": true}
}

func genAction(r *rand.Rand) Action {
	repo := genRepos[r.Intn(len(genRepos))]
	if r.Intn(30) == 0 {
		repo = "not-a-repo"
	}
	switch r.Intn(7) {
	case 0:
		return issue(repo)
	case 1:
		return pr(repo)
	case 2:
		if r.Intn(10) == 0 {
			return Action{Kind: "push", Repo: repo}
		}
	}
	return comment(repo, []int{12, 12, 13, 1, 0}[r.Intn(5)])
}

func genActions(r *rand.Rand, n int) []Action {
	a := make([]Action, n)
	for i := range a {
		a[i] = genAction(r)
	}
	return a
}
