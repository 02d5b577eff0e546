package threadctx

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/google/go-github/v62/github"
)

// perPage is GitHub's maximum page size; fewer pages, fewer requests.
const perPage = 100

// getRaw fetches one API object or array and keeps its bytes.
func getRaw(ctx context.Context, c *github.Client, path string) (json.RawMessage, *github.Response, error) {
	req, err := c.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("build request %s: %w", path, err)
	}
	var raw json.RawMessage
	resp, err := c.Do(ctx, req, &raw)
	if err != nil {
		return nil, resp, fmt.Errorf("GET %s: %w", path, err)
	}
	return raw, resp, nil
}

// GetAll fetches every page of a list endpoint (path without a query), 100
// items a page, and returns the items' raw bytes in order (never nil).
func GetAll(ctx context.Context, c *github.Client, path string) ([]json.RawMessage, error) {
	items, _, err := getAllCounted(ctx, c, path)
	return items, err
}

// GetObject fetches one API object.
func GetObject(ctx context.Context, c *github.Client, path string) (json.RawMessage, error) {
	raw, _, err := getRaw(ctx, c, path)
	return raw, err
}

// cappedWriter keeps the first max bytes written and counts them all.
type cappedWriter struct {
	max   int
	buf   []byte
	total int64
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.max - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// group runs independent fetches concurrently; the first error cancels the
// rest (a stdlib errgroup).
type group struct {
	wg     sync.WaitGroup
	once   sync.Once
	err    error
	cancel context.CancelFunc
}

func newGroup(ctx context.Context) (*group, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	return &group{cancel: cancel}, ctx
}

func (g *group) Go(fn func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := fn(); err != nil {
			g.once.Do(func() {
				g.err = err
				g.cancel()
			})
		}
	}()
}

func (g *group) Wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}

// getAllCounted is GetAll that also reports how many requests it made.
func getAllCounted(ctx context.Context, c *github.Client, path string) ([]json.RawMessage, int, error) {
	n := 0
	all := []json.RawMessage{}
	for page := 1; page > 0; {
		p := fmt.Sprintf("%s?per_page=%d&page=%d", path, perPage, page)
		raw, resp, err := getRaw(ctx, c, p)
		n++
		if err != nil {
			return nil, n, err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, n, fmt.Errorf("GET %s: response is not a JSON array: %w", p, err)
		}
		all = append(all, items...)
		page = resp.NextPage
	}
	return all, n, nil
}

// counter counts requests made by concurrent fetches.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) add(n int) { c.mu.Lock(); c.n += n; c.mu.Unlock() }
func (c *counter) get() int  { c.mu.Lock(); defer c.mu.Unlock(); return c.n }
