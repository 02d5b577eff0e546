package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/transport"
)

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
		resp, err := d.dsp.Do(ctx, req, nil)
		if err != nil {
			return i, fmt.Errorf("send dispatch %d/%d (%s) to %s: %w", i+1, len(reqs), r.EventType, d.cfg.Control, err)
		}
		// GitHub answers 204 No Content; anything else did not come from it.
		if resp.StatusCode != http.StatusNoContent {
			return i, fmt.Errorf("send dispatch %d/%d (%s) to %s: GitHub answers 204, got HTTP %d (%s): not counted as sent",
				i+1, len(reqs), r.EventType, d.cfg.Control, resp.StatusCode, contentType(resp.Header.Get("Content-Type")))
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

func split(repo string) (string, string) {
	o, n, _ := strings.Cut(repo, "/")
	return o, n
}

func contentType(ct string) string {
	if ct == "" {
		return "no content type"
	}
	return ct
}
