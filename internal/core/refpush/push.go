package refpush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v62/github"
)

// Update sets Ref to New if it is at Old now. Old "" means the ref must
// not exist (a create); New "" deletes it. A delete's Old must be an
// object the repository has: git deletes a ref whatever it holds when
// the old value names no object.
type Update struct {
	Ref, Old, New string
}

// ErrRejected: the server refused an update, its ref not at Old (moved,
// created or deleted by someone else) or the update not allowed. Nothing
// of that update was applied.
var ErrRejected = errors.New("ref update rejected")

// ErrInvalid: a push the caller asked for is malformed (a ref name, an
// object id, a signature); nothing was sent.
var ErrInvalid = errors.New("invalid push")

// RejectedError is one refused update, with the server's reason.
type RejectedError struct {
	Ref, Reason string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("refpush: %s: %s: %s", e.Ref, ErrRejected, e.Reason)
}

func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// AnswerError is a push the server answered with an HTTP error. Below 500
// (but 408) it was refused as a whole: nothing was applied.
type AnswerError struct {
	Status     int
	Message    string
	RetryAfter time.Duration // from Retry-After, when given
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("refpush: push answered %d: %s", e.Status, e.Message)
}

// UnpackError: the server could not take the pack (it says why); no
// update was applied.
type UnpackError struct{ Reason string }

func (e *UnpackError) Error() string { return "refpush: the server refused the pack: " + e.Reason }

// MaybeApplied says whether a push that failed with err may still have
// been applied: no answer, a 5xx or a timeout, or an answer that could not
// be read. The caller reads its refs to find out. A refusal (a 4xx, a
// refused pack), a rejected update, a malformed push and a rider with
// nothing to ride on (ErrNotSent) applied nothing.
func MaybeApplied(err error) bool {
	if err == nil {
		return false
	}
	var ae *AnswerError
	if errors.As(err, &ae) {
		return ae.Status >= 500 || ae.Status == http.StatusRequestTimeout
	}
	var ue *UnpackError
	return !errors.As(err, &ue) && !errors.Is(err, ErrRejected) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNotSent)
}

// DefaultTimeout bounds one push, answer included.
const DefaultTimeout = 30 * time.Second

// Client pushes to repositories of one GitHub server with one token.
type Client struct {
	http   *http.Client
	server *url.URL
	token  string
	// rest, when set (ForAPI), writes instead of a server that refuses
	// pushes; restOnly says it refused one.
	rest     *github.Client
	restOnly atomic.Bool
	Timeout  time.Duration // 0 = DefaultTimeout
	// MaxUpdates bounds the updates of one of DeleteAll's pushes; 0 =
	// DefaultMaxUpdates.
	MaxUpdates int
}

// New returns a client pushing to server (GitHub's web address, such as
// https://github.com, where repositories are served as owner/name.git)
// through hc (nil = http.DefaultClient) with token.
func New(hc *http.Client, server, token string) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(server, "/") + "/")
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("refpush: server %q: want an absolute http(s) URL such as https://github.com", server)
	}
	if token == "" {
		return nil, errors.New("refpush: a push needs a token")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{http: hc, server: u, token: token}, nil
}

// ForAPI is a client pushing with token, through gh's HTTP client (its
// timeouts, Retry-After waits and pacing apply to a push as to gh's other
// writes), to the server whose REST API gh talks to (ServerFromAPI): the
// token goes nowhere gh's would not.
func ForAPI(gh *github.Client, token string) (*Client, error) {
	c, err := New(gh.Client(), ServerFromAPI(gh.BaseURL), token)
	if err == nil {
		c.rest = gh
	}
	return c, err
}

// ServerFromAPI is the web address that serves the repositories of the
// REST API at api: github.com for api.github.com, the host for a GitHub
// Enterprise Server's /api/v3/, else api itself (a test server serving
// both).
func ServerFromAPI(api *url.URL) string {
	u := *api
	switch {
	case strings.EqualFold(u.Host, "api.github.com"):
		u.Host, u.Path = "github.com", "/"
	case strings.HasSuffix(u.Path, "/api/v3/") || strings.HasSuffix(u.Path, "/api/v3"):
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "api/v3")
	}
	return strings.TrimSuffix(u.String(), "/")
}

// Push sends commits and updates to repo ("owner/name") in one request.
// It returns one error per update (nil: applied; a *RejectedError: not),
// or an error for the push as a whole (see MaybeApplied). commits are the
// new objects the updates need; every other object they reach must be in
// the repository already.
func (c *Client) Push(ctx context.Context, repo string, commits []Commit, updates []Update) ([]error, error) {
	return c.PushObjects(ctx, repo, nil, commits, updates)
}

// PushObjects is Push with blobs and trees the commits name that the
// repository may lack (a commit of content, not only a state).
//
// A client made by ForAPI falls back to the REST API when the server
// refuses pushes as such (pushesRefused): for this push and the process's
// later ones.
func (c *Client) PushObjects(ctx context.Context, repo string, objects []Object, commits []Commit, updates []Update) ([]error, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("refpush: repository %q: want owner/name: %w", repo, ErrInvalid)
	}
	body, err := request(objects, commits, updates)
	if err != nil {
		return nil, err
	}
	if c.rest != nil && c.restOnly.Load() {
		return c.viaREST(ctx, owner, name, objects, commits, updates)
	}
	res, err := c.send(ctx, owner, name, body, updates)
	if c.rest != nil && pushesRefused(err) {
		c.restOnly.Store(true)
		return c.viaREST(ctx, owner, name, objects, commits, updates)
	}
	return res, err
}

// Refused says the server refused a push as such and the client writes
// through the REST API since (false for a nil client).
func (c *Client) Refused() bool { return c != nil && c.rest != nil && c.restOnly.Load() }

// send makes one push.
func (c *Client) send(ctx context.Context, owner, name string, body []byte, updates []Update) ([]error, error) {
	repo := owner + "/" + name
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := c.server.JoinPath(owner, name+".git", "git-receive-pack")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("refpush: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	req.Header.Set("Accept", "application/x-git-receive-pack-result")
	req.SetBasicAuth("x-access-token", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("refpush: push to %s: %w", repo, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("refpush: push to %s: read the answer: %w", repo, err)
	}
	if resp.StatusCode != http.StatusOK {
		ae := &AnswerError{Status: resp.StatusCode, Message: strings.TrimSpace(string(answer))}
		if len(ae.Message) > 300 {
			ae.Message = ae.Message[:300] + "…"
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			ae.RetryAfter = time.Duration(s) * time.Second
		}
		return nil, ae
	}
	return parseReport(answer, updates)
}

// request is the body of a push: the update commands, the first carrying
// the capabilities asked for, a flush, then the pack (none when every
// update is a delete).
func request(objects []Object, commits []Commit, updates []Update) ([]byte, error) {
	if len(updates) == 0 {
		return nil, fmt.Errorf("refpush: nothing to push: %w", ErrInvalid)
	}
	var b bytes.Buffer
	seen := map[string]bool{}
	needPack := false
	for i, up := range updates {
		if !strings.HasPrefix(up.Ref, "refs/") || strings.ContainsAny(up.Ref, " \n\x00") || seen[up.Ref] {
			return nil, fmt.Errorf("refpush: ref %q: want one update per full ref name (refs/…): %w", up.Ref, ErrInvalid)
		}
		seen[up.Ref] = true
		old, nw := orZero(up.Old), orZero(up.New)
		if !isID(old) || !isID(nw) || (old == zeroID && nw == zeroID) {
			return nil, fmt.Errorf("refpush: update of %s from %q to %q: want object ids, not both empty: %w", up.Ref, up.Old, up.New, ErrInvalid)
		}
		needPack = needPack || nw != zeroID
		line := old + " " + nw + " " + up.Ref
		if i == 0 {
			// report-status: a line per update saying whether it was applied
			line += "\x00report-status agent=mention-runner"
		}
		writePkt(&b, line+"\n")
	}
	b.WriteString("0000")
	if needPack {
		objs := []packObject{{typ: packTree}} // the empty tree, in case the repository lacks it
		for _, o := range objects {
			typ := packBlob
			if o.Tree {
				typ = packTree
			}
			objs = append(objs, packObject{typ: typ, data: o.Data})
		}
		for _, c := range commits {
			if err := c.validate(); err != nil {
				return nil, err
			}
			objs = append(objs, packObject{typ: packCommit, data: c.Encode()})
		}
		b.Write(encodePack(objs))
	}
	return b.Bytes(), nil
}

func orZero(id string) string {
	if id == "" {
		return zeroID
	}
	return id
}

func writePkt(b *bytes.Buffer, s string) {
	fmt.Fprintf(b, "%04x%s", len(s)+4, s)
}
