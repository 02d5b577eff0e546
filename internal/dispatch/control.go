package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/contract"
	"github.com/mention-runner/mention-runner/internal/transport"
)

// controlHead returns a commit of CONTROL for dedupe refs to point at. Any
// commit will do and commits outlive branch moves, so it is fetched once.
func (d *Dispatcher) controlHead(ctx context.Context, refresh bool) (string, error) {
	d.mu.Lock()
	sha := d.headSHA
	d.mu.Unlock()
	if sha != "" && !refresh {
		return sha, nil
	}
	owner, name := split(d.cfg.Control)
	refs, _, err := d.ctl.Git.ListMatchingRefs(ctx, owner, name, &github.ReferenceListOptions{Ref: "heads/"})
	if err != nil {
		return "", fmt.Errorf("list branches of control repo %s: %w", d.cfg.Control, err)
	}
	for _, r := range refs {
		if s := r.GetObject().GetSHA(); s != "" {
			sha = s
			break
		}
	}
	if sha == "" {
		return "", fmt.Errorf("control repo %s has no branch; push one commit so dedupe refs have something to point at", d.cfg.Control)
	}
	d.mu.Lock()
	d.headSHA = sha
	d.mu.Unlock()
	return sha, nil
}

// claim creates the dedupe ref. It reports false when the ref already
// exists: someone handled this mention already.
func (d *Dispatcher) claim(ctx context.Context, jobID string) (bool, error) {
	owner, name := split(d.cfg.Control)
	for attempt := 0; attempt < 2; attempt++ {
		sha, err := d.controlHead(ctx, attempt > 0)
		if err != nil {
			return false, err
		}
		_, resp, err := d.ctl.Git.CreateRef(ctx, owner, name, &github.Reference{
			Ref: github.String(contract.DispatchedRef(jobID)), Object: &github.GitObject{SHA: github.String(sha)}})
		if err == nil {
			return true, nil
		}
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			msg := strings.ToLower(errorMessage(err))
			switch {
			case strings.Contains(msg, "already exists"):
				return false, nil
			case strings.Contains(msg, "object does not exist") && attempt == 0:
				continue // the cached commit is gone: look again
			}
		}
		return false, fmt.Errorf("create dedupe ref %s in %s: %w", contract.DispatchedRef(jobID), d.cfg.Control, err)
	}
	return false, fmt.Errorf("create dedupe ref %s in %s: control branch commit keeps vanishing", contract.DispatchedRef(jobID), d.cfg.Control)
}

// claimed reports whether the dedupe ref exists (a cheap check for
// triggers an earlier cycle probably handled).
func (d *Dispatcher) claimed(ctx context.Context, jobID string) (bool, error) {
	owner, name := split(d.cfg.Control)
	_, resp, err := d.ctl.Git.GetRef(ctx, owner, name, strings.TrimPrefix(contract.DispatchedRef(jobID), "refs/"))
	if err == nil {
		return true, nil
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	return false, fmt.Errorf("read dedupe ref %s: %w", contract.DispatchedRef(jobID), err)
}

// release deletes the dedupe ref so a later cycle retries the mention. It
// runs even when ctx is done, with its own short timeout.
func (d *Dispatcher) release(ctx context.Context, jobID string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	owner, name := split(d.cfg.Control)
	resp, err := d.ctl.Git.DeleteRef(ctx, owner, name, strings.TrimPrefix(contract.DispatchedRef(jobID), "refs/"))
	if err != nil && (resp == nil || resp.StatusCode != http.StatusUnprocessableEntity && resp.StatusCode != http.StatusNotFound) {
		return fmt.Errorf("delete dedupe ref %s: %w", contract.DispatchedRef(jobID), err)
	}
	return nil
}

// send posts every request body to CONTROL's dispatches endpoint, byte for
// byte as transport.Encode sized it.
func (d *Dispatcher) send(ctx context.Context, reqs []transport.Request) (int, error) {
	u := fmt.Sprintf("repos/%s/dispatches", d.cfg.Control)
	for i, r := range reqs {
		body, err := json.Marshal(r)
		if err != nil {
			return i, fmt.Errorf("encode dispatch %d/%d: %w", i+1, len(reqs), err)
		}
		req, err := d.dsp.NewRequest(http.MethodPost, u, nil)
		if err != nil {
			return i, fmt.Errorf("build dispatch request: %w", err)
		}
		setBody(req, body)
		if _, err := d.dsp.Do(ctx, req, nil); err != nil {
			return i, fmt.Errorf("send dispatch %d/%d (%s) to %s: %w", i+1, len(reqs), r.EventType, d.cfg.Control, err)
		}
	}
	return len(reqs), nil
}

func setBody(req *http.Request, body []byte) {
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
}

func errorMessage(err error) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		return er.Message
	}
	return err.Error()
}

func split(repo string) (string, string) {
	o, n, _ := strings.Cut(repo, "/")
	return o, n
}
