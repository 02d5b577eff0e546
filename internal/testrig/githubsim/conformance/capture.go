package conformance

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Recorder is an http.RoundTripper that keeps a copy of every exchange, so
// a test can run a real client (go-github) and validate what went over the
// wire afterwards.
type Recorder struct {
	Next http.RoundTripper // nil = http.DefaultTransport

	mu        sync.Mutex
	exchanges []Exchange
}

// RoundTrip performs the request and records it with its response. Bodies
// are read in full: this is for tests talking to a local simulator.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	next := r.Next
	if next == nil {
		next = http.DefaultTransport
	}
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("record request body: %w", err)
		}
		reqBody = b
		// Clone so the caller's request is not mutated (RoundTripper contract).
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("record response body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	u := *req.URL
	r.mu.Lock()
	r.exchanges = append(r.exchanges, Exchange{
		Method:     req.Method,
		URL:        &u,
		ReqHeader:  req.Header.Clone(),
		ReqBody:    reqBody,
		Status:     resp.StatusCode,
		RespHeader: resp.Header.Clone(),
		RespBody:   respBody,
	})
	r.mu.Unlock()
	return resp, nil
}

// Exchanges returns a copy of everything recorded so far, in order.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Exchange(nil), r.exchanges...)
}
