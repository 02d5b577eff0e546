package threadctx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-github/v62/github"
)

// DefaultMaxBytes is the budget when Options.MaxBytes is zero.
const DefaultMaxBytes = 512 << 10

// Options bound the context.
type Options struct {
	// MaxBytes is the budget for the whole context. The trigger is kept
	// even when it alone is larger.
	MaxBytes int
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return o
}

// Request names the thread and the trigger. Fields holding API responses are
// optional: a caller that already fetched one (the webhook's repository, the
// comments the poller listed) passes it and saves a request. A nil list means
// "fetch it"; pass an empty, non-nil slice for "none".
type Request struct {
	Repo          string // owner/name
	Number        int
	IsPR          bool
	TriggerNodeID string // node_id of the comment, review, issue or PR carrying the mention

	Repository     json.RawMessage
	Issue          json.RawMessage
	PullRequest    json.RawMessage
	Comments       []json.RawMessage
	Reviews        []json.RawMessage
	ReviewComments []json.RawMessage
	// Labels is the repository's labels, the first page of GET
	// /repos/{o}/{r}/labels (100): what the agent may add or remove.
	Labels json.RawMessage
	// LabelRepos, when set, names the further repositories whose labels
	// the context carries (the ones repo= flags name). Build calls it
	// beside its other reads, so it may wait for what decides the list
	// (the opt-out list), and reads the labels of the first
	// contract.MaxLabelRepos; a repository it cannot read is recorded as
	// such, never an error.
	LabelRepos func(context.Context) LabelRepos
	// RepoLabels are those repositories' labels (lower-case owner/name →
	// the first page of GET /repos/{o}/{r}/labels) and RepoLabelsMissing
	// says why a named one's are not there; Build fills both from
	// LabelRepos, a caller with no client may pass them.
	RepoLabels        map[string]json.RawMessage
	RepoLabelsMissing map[string]string
	// RepoLabelsOver counts the repositories past contract.MaxLabelRepos.
	RepoLabelsOver int
}

// LabelRepos is what the caller decided about further repositories'
// labels.
type LabelRepos struct {
	// Repos are owner/name, in the order to read them.
	Repos []string
	// PublicOnly leaves a private repository's labels out (one more read
	// each, of the repository, beside its labels): the context goes where
	// a private repository's data must not.
	PublicOnly bool
}

// Result is the built context.
type Result struct {
	JSON       []byte
	Trigger    Trigger
	Truncation Truncation
	// Requests is how many API requests Build made.
	Requests int
	// Labels are the thread repository's labels as read (or given; nil
	// when they could not be read): a caller may keep them for a while
	// for its next mention there.
	Labels json.RawMessage
}

// ErrTriggerNotFound means the trigger is not in the thread any more (deleted,
// or the node id does not belong to this thread).
var ErrTriggerNotFound = errors.New("trigger not found in the thread")

// Build fetches what the request lacks, concurrently, and assembles the context.
func Build(ctx context.Context, c *github.Client, req Request, o Options) (*Result, error) {
	o = o.withDefaults()
	if req.Repo == "" || req.Number <= 0 || req.TriggerNodeID == "" {
		return nil, fmt.Errorf("threadctx: request needs repo, number and trigger node id (got %q, %d, %q)", req.Repo, req.Number, req.TriggerNodeID)
	}
	var requests counter
	g, gctx := newGroup(ctx)
	obj := func(dst *json.RawMessage, path string) {
		if *dst != nil {
			return
		}
		g.Go(func() error {
			raw, err := GetObject(gctx, c, path)
			requests.add(1)
			*dst = raw
			return err
		})
	}
	list := func(dst *[]json.RawMessage, path string) {
		if *dst != nil {
			return
		}
		g.Go(func() error {
			items, n, err := getAllCounted(gctx, c, path)
			requests.add(n)
			*dst = items
			return err
		})
	}
	thread := fmt.Sprintf("repos/%s", req.Repo)
	obj(&req.Repository, thread)
	obj(&req.Issue, fmt.Sprintf("%s/issues/%d", thread, req.Number))
	list(&req.Comments, fmt.Sprintf("%s/issues/%d/comments", thread, req.Number))
	if req.Labels == nil && c != nil {
		// The labels are optional: a repository that will not list them
		// (or a caller with no client, building from what it holds)
		// leaves the context without; no label change can then be made.
		g.Go(func() error {
			raw, err := GetObject(gctx, c, fmt.Sprintf("%s/labels?per_page=%d", thread, perPage))
			requests.add(1)
			if err == nil {
				req.Labels = raw
			}
			return nil
		})
	}
	if req.LabelRepos != nil && req.RepoLabels == nil && c != nil {
		g.Go(func() error {
			n := readRepoLabels(gctx, c, &req, req.LabelRepos(gctx))
			requests.add(n)
			return nil
		})
	}
	if req.IsPR {
		obj(&req.PullRequest, fmt.Sprintf("%s/pulls/%d", thread, req.Number))
		list(&req.Reviews, fmt.Sprintf("%s/pulls/%d/reviews", thread, req.Number))
		list(&req.ReviewComments, fmt.Sprintf("%s/pulls/%d/comments", thread, req.Number))
		// No diff: the runner's fetch step reads it pinned to the head sha
		// this context records, beside the code it fetches (prdiff).
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("threadctx: fetch %s#%d: %w", req.Repo, req.Number, err)
	}
	res, err := assemble(req, o)
	if err != nil {
		return nil, fmt.Errorf("threadctx: %s#%d: %w", req.Repo, req.Number, err)
	}
	res.Requests = requests.get()
	res.Labels = req.Labels
	return res, nil
}
