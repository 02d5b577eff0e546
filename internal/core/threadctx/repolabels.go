package threadctx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// readRepoLabels reads the labels of the first contract.MaxLabelRepos of
// lr.Repos (other than the thread's) concurrently into req and returns how
// many requests it made. A repository whose labels cannot be read is
// recorded in req.RepoLabelsMissing with why: the mention goes on, and a
// label change there is refused saying so.
func readRepoLabels(ctx context.Context, c *github.Client, req *Request, lr LabelRepos) int {
	var repos []string
	seen := map[string]bool{strings.ToLower(req.Repo): true}
	for _, r := range lr.Repos {
		r = strings.ToLower(r)
		if seen[r] {
			continue
		}
		seen[r] = true
		if len(repos) == contract.MaxLabelRepos {
			req.RepoLabelsOver++
			continue
		}
		repos = append(repos, r)
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		n       int
		labels  = map[string]json.RawMessage{}
		missing = map[string]string{}
	)
	for _, r := range repos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, why, reads := readLabelsOf(ctx, c, r, lr.PublicOnly)
			mu.Lock()
			defer mu.Unlock()
			n += reads
			if why != "" {
				missing[r] = why
			} else {
				labels[r] = raw
			}
		}()
	}
	wg.Wait()
	req.RepoLabels, req.RepoLabelsMissing = labels, missing
	return n
}

// readLabelsOf reads repo's first page of labels and, when publicOnly,
// its visibility beside them (no round trip more; a private repository's
// labels are dropped unseen); why says what kept them out.
func readLabelsOf(ctx context.Context, c *github.Client, repo string, publicOnly bool) (raw json.RawMessage, why string, reads int) {
	var (
		obj    json.RawMessage
		objErr error
		wg     sync.WaitGroup
	)
	if publicOnly {
		reads++
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, objErr = GetObject(ctx, c, "repos/"+repo)
		}()
	}
	reads++
	raw, err := GetObject(ctx, c, fmt.Sprintf("repos/%s/labels?per_page=%d", repo, perPage))
	wg.Wait()
	switch {
	case objErr != nil:
		return nil, unreadable(objErr), reads
	case err != nil:
		return nil, unreadable(err), reads
	case publicOnly:
		var r struct {
			Private *bool `json:"private"`
		}
		if json.Unmarshal(obj, &r) != nil || r.Private == nil || *r.Private {
			return nil, "private (or its visibility unknown), and the context goes to a public control repository", reads
		}
	}
	return raw, "", reads
}

// unreadable says in a few fixed words why a read failed (never GitHub's
// own message, which is not ours to pass on).
func unreadable(err error) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Sprintf("not readable by the bot (HTTP %d)", er.Response.StatusCode)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "not read in time"
	}
	return "not readable by the bot (no answer)"
}
