package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// eventFile is the repository_dispatch webhook event GitHub hands the
// workflow run in GITHUB_EVENT_PATH: the event type becomes "action".
type eventFile struct {
	Action        string          `json:"action"`
	Branch        string          `json:"branch"`
	ClientPayload json.RawMessage `json:"client_payload"`
	Repository    json.RawMessage `json:"repository"`
	Sender        json.RawMessage `json:"sender"`
}

// dispatchEvent builds the event for d, with the control repository and
// the sender (the bot) as the API shows them.
func (f *Flow) dispatchEvent(ctx context.Context, d githubsim.Dispatch) ([]byte, error) {
	repo, err := f.getJSON(ctx, "repos/"+ControlRepo)
	if err != nil {
		return nil, err
	}
	sender, err := f.getJSON(ctx, "users/"+BotLogin)
	if err != nil {
		return nil, err
	}
	payload := d.ClientPayload
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	return json.MarshalIndent(eventFile{Action: d.EventType, Branch: "main", ClientPayload: payload, Repository: repo, Sender: sender}, "", "  ")
}

// getJSON reads one API object with the control repo's token.
func (f *Flow) getJSON(ctx context.Context, path string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.w.BaseURL+path, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+ControlToken)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("GET %s: the answer is not JSON", path)
	}
	return body, nil
}
