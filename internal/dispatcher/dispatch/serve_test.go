package dispatch

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

var secret = []byte("s3cret")

func post(t *testing.T, url, event string, body []byte, sig string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-GitHub-Event", event)
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

func TestServe(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.dispatcher().WebhookHandler(secret, 30*time.Second))
	t.Cleanup(srv.Close)
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	good := e.delivery("issue_comment", n, c.GetID())

	cases := []struct {
		name, path, event string
		body              []byte
		sig               string
		want              int
	}{
		{"no signature", "/webhook", "issue_comment", good, "", http.StatusUnauthorized},
		{"bad signature", "/webhook", "issue_comment", good, webhook.Sign([]byte("other"), good), http.StatusUnauthorized},
		{"malformed JSON", "/webhook", "issue_comment", []byte("{nope"), webhook.Sign(secret, []byte("{nope")), http.StatusBadRequest},
		{"unsupported event", "/webhook", "ping", []byte(`{"zen":"x"}`), webhook.Sign(secret, []byte(`{"zen":"x"}`)), http.StatusNoContent},
		{"handled", "/webhook", "issue_comment", good, webhook.Sign(secret, good), http.StatusAccepted},
		{"handled again on /", "/", "issue_comment", good, webhook.Sign(secret, good), http.StatusAccepted},
	}
	var decs []Decision
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := post(t, srv.URL+tc.path, tc.event, tc.body, tc.sig)
			assert.Equal(t, tc.want, code, string(out))
			if code == http.StatusAccepted {
				var d Decision
				require.NoError(t, json.Unmarshal(out, &d))
				decs = append(decs, d)
			}
		})
	}
	require.Len(t, decs, 2)
	assert.Equal(t, Dispatch, decs[0].Decision)
	assert.Equal(t, Ignore, decs[1].Decision, "a redelivery is not dispatched twice")
	assert.Len(t, e.sim.Dispatches(control), 1)

	resp, err := http.Get(srv.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestServeEveryEventKind(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.dispatcher().WebhookHandler(secret, 30*time.Second))
	t.Cleanup(srv.Close)
	pr := e.pr("@mrbot look at this", "")
	rv, err := e.sim.AddReview(proj, pr, "bob", "COMMENTED", "@mrbot and this")
	require.NoError(t, err)
	rc, err := e.sim.AddReviewComment(proj, pr, 0, "alice", "README.md", 1, "@mrbot this line")
	require.NoError(t, err)
	is := e.issue("@mrbot the issue body")
	c := e.comment(is, "bob", "@mrbot a comment")
	for _, tc := range []struct {
		event  string
		number int
		id     int64
	}{{"pull_request", pr, 0}, {"pull_request_review", pr, rv}, {"pull_request_review_comment", pr, rc}, {"issues", is, 0}, {"issue_comment", is, c.GetID()}} {
		body := e.delivery(tc.event, tc.number, tc.id)
		code, out := post(t, srv.URL+"/webhook", tc.event, body, webhook.Sign(secret, body))
		require.Equal(t, http.StatusAccepted, code, string(out))
		var d Decision
		require.NoError(t, json.Unmarshal(out, &d))
		assert.Equal(t, Dispatch, d.Decision, "%s: %s", tc.event, d.Reason)
	}
	assert.Len(t, e.contexts(), 5)
}

// TestDryRunExamples runs GitHub's own webhook examples (and copies with a
// mention written in) through a dry run: decisions only, no API call.
func TestDryRunExamples(t *testing.T) {
	// No clients at all: any API call would fail the test with a nil client.
	d, err := New(Config{Bot: "mrbot", Allowed: ParseAllowList("Codertocat"), DryRun: true}, Clients{})
	require.NoError(t, err)

	files, err := filepath.Glob("../webhook/testdata/examples/*.json")
	require.NoError(t, err)
	require.Len(t, files, 5)
	keys := map[string]string{"issue_comment": "comment", "issues": "issue", "pull_request": "pull_request",
		"pull_request_review": "review", "pull_request_review_comment": "comment"}
	bodies := []struct{ body, want, reason string }{
		{"", Ignore, "no mention"},
		{"@mrbot please fix", Dispatch, "dry run"},
		{"@mrbot !cfg no-pr\nplease fix", Dispatch, "dry run"},
		{"@mrbot !cfg bogus", Reply, "invalid !cfg"},
		{"@mrbot go away", Block, "authority not checked"},
		{"@mrbot come back", Unblock, "authority not checked"},
		{"`@mrbot` in code", Ignore, "no mention"},
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		event := filepath.Base(f)
		event = event[:bytes.IndexByte([]byte(event), '.')]
		for _, b := range bodies {
			t.Run(event+"/"+b.body, func(t *testing.T) {
				payload := raw
				if b.body != "" {
					var m map[string]any
					require.NoError(t, json.Unmarshal(raw, &m))
					m[keys[event]].(map[string]any)["body"] = b.body
					payload, err = json.Marshal(m)
					require.NoError(t, err)
				}
				trig, err := DecodeEvent(event, payload)
				require.NoError(t, err)
				dec, err := d.Handle(t.Context(), trig)
				require.NoError(t, err)
				assert.Equal(t, b.want, dec.Decision, dec.Reason)
				assert.Contains(t, dec.Reason, b.reason)
				assert.Equal(t, "Codertocat/Hello-World", dec.Trigger.Repo)
				assert.NotEmpty(t, dec.JobID)
				if b.want == Dispatch {
					require.NotNil(t, dec.Policy)
				}
			})
		}
	}
}

// countingReader counts the bytes the server pulls from a request body.
type countingReader struct {
	n, limit int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.limit-c.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	c.n += k
	return int(k), nil
}

// TestWebhookBodyCappedBeforeRead: an oversized delivery is refused having
// read at most MaxWebhookBytes+1 bytes (none when Content-Length says so),
// and the cap is far below GitHub's 25 MB payload limit.
func TestWebhookBodyCappedBeforeRead(t *testing.T) {
	e := newEnv(t)
	h := e.dispatcher().WebhookHandler(secret, 30*time.Second)
	require.LessOrEqual(t, MaxWebhookBytes, 2<<20)
	for _, declared := range []bool{true, false} {
		body := &countingReader{limit: 25 << 20}
		req := httptest.NewRequest(http.MethodPost, "/webhook", body)
		req.ContentLength = -1
		if declared {
			req.ContentLength = body.limit
		}
		req.Header.Set("X-GitHub-Event", "issue_comment")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		if declared {
			assert.Zero(t, body.n, "declared too big: nothing read")
		} else {
			assert.LessOrEqual(t, body.n, int64(MaxWebhookBytes+1<<15), "read stops at the cap")
		}
	}
}

// TestServeEditedIgnored: an "edited" delivery is answered with a decision
// that says why nothing ran, and nothing is dispatched.
func TestServeEditedIgnored(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.dispatcher().WebhookHandler(secret, 30*time.Second))
	t.Cleanup(srv.Close)
	n := e.issue("@mrbot do it")
	c := e.comment(n, "alice", "@mrbot do it")
	pr := e.pr("@mrbot do it", "")
	rid, err := e.sim.AddReview(proj, pr, "alice", "COMMENTED", "@mrbot do it")
	require.NoError(t, err)
	rcid, err := e.sim.AddReviewComment(proj, pr, rid, "alice", "README.md", 1, "@mrbot do it")
	require.NoError(t, err)
	cases := []struct {
		event  string
		number int
		id     int64
	}{
		{"issue_comment", n, c.GetID()},
		{"issues", n, 0},
		{"pull_request", pr, 0},
		{"pull_request_review", pr, rid},
		{"pull_request_review_comment", pr, rcid},
	}
	for _, tc := range cases {
		t.Run(tc.event, func(t *testing.T) {
			var p map[string]any
			require.NoError(t, json.Unmarshal(e.delivery(tc.event, tc.number, tc.id), &p))
			p["action"] = "edited"
			body, err := json.Marshal(p)
			require.NoError(t, err)
			code, out := post(t, srv.URL+"/webhook", tc.event, body, webhook.Sign(secret, body))
			require.Equal(t, http.StatusAccepted, code, string(out))
			var d Decision
			require.NoError(t, json.Unmarshal(out, &d))
			assert.Equal(t, Ignore, d.Decision)
			assert.Equal(t, "edited: edits never trigger", d.Reason)
			assert.Empty(t, e.sim.Dispatches(control))
		})
	}
}
