package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

// MaxWebhookBytes caps a delivery's body, checked before any of it is read
// (an unauthenticated sender could otherwise make us buffer GitHub's 25 MB
// payload cap per request). The events we handle carry at most an issue or
// PR body and a comment body of 65,536 characters each (up to 6 bytes per
// character once JSON-escaped) plus small objects: well under 2 MiB.
const MaxWebhookBytes = 2 << 20

// DecodeEvent turns one webhook delivery into a trigger, keeping the
// payload's repository, issue and pull_request objects for the context
// (they are the REST API's shapes: fetching them again would cost a
// request each). Unsupported events and actions wrap webhook.ErrUnsupported;
// malformed ones are *webhook.DecodeError.
func DecodeEvent(event string, body []byte) (*Trigger, error) {
	wt, err := webhook.Decode(event, body)
	if err != nil {
		return nil, err
	}
	var p struct {
		Repository  json.RawMessage `json:"repository"`
		Issue       json.RawMessage `json:"issue"`
		PullRequest json.RawMessage `json:"pull_request"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("read repository of %s delivery: %w", event, err)
	}
	t := &Trigger{Trigger: *wt, Repository: p.Repository}
	t.pre.issue, t.pre.pull = object(p.Issue, wt.Number), object(p.PullRequest, wt.Number)
	return t, nil
}

// object keeps a payload's issue or pull request when it is the thread's
// own object (a JSON object with the thread's number); anything else is
// fetched instead.
func object(raw json.RawMessage, number int) json.RawMessage {
	var o struct {
		Number int `json:"number"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &o) != nil || o.Number != number {
		return nil
	}
	return raw
}

// WebhookHandler serves GitHub webhook deliveries on POST / and POST
// /webhook, and GET /healthz. It answers 401 for a bad signature, 400 for a
// malformed body, 204 for events that cannot carry a mention, 202 with the
// decision JSON when handled, 500 when handling failed (GitHub shows the
// delivery as failed and it can be redelivered). Handling is synchronous,
// bounded by timeout, and not cut short when GitHub stops waiting (10 s).
// The rate state is not written per delivery: run FlushEvery beside it.
func (d *Dispatcher) WebhookHandler(secret []byte, timeout time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	h := func(w http.ResponseWriter, r *http.Request) { d.serveDelivery(w, r, secret, timeout) }
	mux.HandleFunc("POST /webhook", h)
	mux.HandleFunc("POST /{$}", h)
	return mux
}

func (d *Dispatcher) serveDelivery(w http.ResponseWriter, r *http.Request, secret []byte, timeout time.Duration) {
	log := d.cfg.Logger
	if r.ContentLength > MaxWebhookBytes {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxWebhookBytes))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxWebhookBytes))
			return
		}
		httpError(w, http.StatusBadRequest, "could not read body")
		return
	}
	if err := webhook.Verify(secret, body, r.Header.Get("X-Hub-Signature-256")); err != nil {
		log.Warn("webhook rejected", "delivery", r.Header.Get("X-GitHub-Delivery"), "error", err.Error())
		httpError(w, http.StatusUnauthorized, "bad signature")
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	t, err := DecodeEvent(event, body)
	if errors.Is(err, webhook.ErrUnsupported) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		log.Warn("webhook malformed", "delivery", r.Header.Get("X-GitHub-Delivery"), "event", event, "error", err.Error())
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
	defer cancel()
	// The rate state is written by FlushEvery, not per delivery.
	dec, err := d.Handle(ctx, t)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "handling failed: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(dec)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
