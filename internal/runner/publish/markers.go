package publish

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// key names one write: the marker's job id and output index. Writes that
// are not agent outputs use a suffixed job id ("<jobid>.session").
type key struct {
	job   string
	index int
}

func (k key) marker() string { return contract.OutputMarker(k.job, k.index) }

// found is something already on GitHub that carries a marker.
type found struct {
	number int    // the issue or PR; for a comment, its thread
	id     int64  // comment id (0 for issues)
	url    string // html_url
	body   string
}

// markerIndex remembers, per thread and per repository, the marked writes
// already on GitHub. Only items written by the expected author count, so
// anyone else quoting a marker cannot suppress a write.
type markerIndex struct {
	since   time.Time
	threads map[string]map[key]found // lower repo#n → comments
	issues  map[string]map[key]found // lower repo → issues and PRs
}

func newMarkerIndex(since time.Time) *markerIndex {
	return &markerIndex{since: since, threads: map[string]map[key]found{}, issues: map[string]map[key]found{}}
}

func markerKey(body string) (key, bool) {
	job, idx, ok := contract.ParseOutputMarker(body)
	return key{job, idx}, ok
}

// comment looks for k among the comments on repo#number written by author;
// fresh re-lists the thread instead of trusting what was seen before.
func (m *markerIndex) comment(ctx context.Context, gh *github.Client, repo string, number int, author string, k key, fresh bool) (found, bool, error) {
	id := strings.ToLower(fmt.Sprintf("%s#%d", repo, number))
	if _, ok := m.threads[id]; !ok || fresh {
		all, err := listThread(ctx, gh, repo, number, author, m.since)
		if err != nil {
			return found{}, false, err
		}
		m.threads[id] = all
	}
	f, ok := m.threads[id][k]
	return f, ok, nil
}

// addThread records that repo#number holds none of the marked comments
// looked for, so the first look does not list it (a fresh one still does).
func (m *markerIndex) addThread(repo string, number int) {
	id := strings.ToLower(fmt.Sprintf("%s#%d", repo, number))
	if m.threads[id] == nil {
		m.threads[id] = map[key]found{}
	}
}

func (m *markerIndex) addComment(repo string, number int, k key, f found) {
	id := strings.ToLower(fmt.Sprintf("%s#%d", repo, number))
	if m.threads[id] == nil {
		m.threads[id] = map[key]found{}
	}
	m.threads[id][k] = f
}

// issue looks for k among issues and pull requests author created in repo.
func (m *markerIndex) issue(ctx context.Context, gh *github.Client, repo, author string, k key, fresh bool) (found, bool, error) {
	id := strings.ToLower(repo)
	if _, ok := m.issues[id]; !ok || fresh {
		all, err := listCreated(ctx, gh, repo, author, m.since)
		if err != nil {
			return found{}, false, err
		}
		m.issues[id] = all
	}
	f, ok := m.issues[id][k]
	return f, ok, nil
}

func (m *markerIndex) addIssue(repo string, k key, f found) {
	id := strings.ToLower(repo)
	if m.issues[id] == nil {
		m.issues[id] = map[key]found{}
	}
	m.issues[id][k] = f
}

const perPage = 100

// maxPages bounds a listing; 100 pages of 100 is far beyond any thread a
// run writes to, and a runaway listing must not hang publish.
const maxPages = 100

func listThread(ctx context.Context, gh *github.Client, repo string, number int, author string, since time.Time) (map[key]found, error) {
	owner, name := splitRepo(repo)
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: perPage}}
	if !since.IsZero() {
		opt.Since = &since
	}
	out := map[key]found{}
	for page := 0; page < maxPages; page++ {
		cs, resp, err := gh.Issues.ListComments(ctx, owner, name, number, opt)
		if err != nil {
			return nil, fmt.Errorf("list comments on %s#%d: %w", repo, number, err)
		}
		for _, c := range cs {
			if !strings.EqualFold(c.GetUser().GetLogin(), author) {
				continue
			}
			if k, ok := markerKey(c.GetBody()); ok {
				out[k] = found{number: number, id: c.GetID(), url: c.GetHTMLURL(), body: c.GetBody()}
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
	return nil, fmt.Errorf("list comments on %s#%d: more than %d pages", repo, number, maxPages)
}

func listCreated(ctx context.Context, gh *github.Client, repo, author string, since time.Time) (map[key]found, error) {
	owner, name := splitRepo(repo)
	opt := &github.IssueListByRepoOptions{Creator: author, State: "all", Since: since, ListOptions: github.ListOptions{PerPage: perPage}}
	out := map[key]found{}
	for page := 0; page < maxPages; page++ {
		is, resp, err := gh.Issues.ListByRepo(ctx, owner, name, opt)
		if err != nil {
			return nil, fmt.Errorf("list issues created by %s in %s: %w", author, repo, err)
		}
		for _, i := range is {
			if !strings.EqualFold(i.GetUser().GetLogin(), author) {
				continue
			}
			if k, ok := markerKey(i.GetBody()); ok {
				out[k] = found{number: i.GetNumber(), url: i.GetHTMLURL(), body: i.GetBody()}
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
	return nil, fmt.Errorf("list issues created by %s in %s: more than %d pages", author, repo, maxPages)
}

func splitRepo(repo string) (string, string) {
	o, n, _ := strings.Cut(repo, "/")
	return o, n
}
