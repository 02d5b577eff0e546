package hostile

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
)

var hookSecret = []byte("s3cret-webhook")

func example(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "dispatcher", "webhook", "testdata", "examples", name+".json"))
	require.NoError(t, err)
	return b
}

// Forged, malformed and oversized deliveries are refused by the
// dispatcher's webhook endpoint before anything acts on them. The
// dispatcher runs dry: a delivery that got through would answer 202.
func TestForgedAndMalformedWebhooks(t *testing.T) {
	d, err := dispatch.New(dispatch.Config{Bot: "Codertocat", DryRun: true, Allowed: dispatch.ParseAllowList("*")}, dispatch.Clients{})
	require.NoError(t, err)
	srv := httptest.NewServer(d.WebhookHandler(hookSecret, 10*time.Second))
	t.Cleanup(srv.Close)

	good := example(t, "issue_comment.created")
	other := bytes.Replace(good, []byte(`"login": "Codertocat"`), []byte(`"login": "mallory"`), 1)
	require.NotEqual(t, good, other)
	wrongType := bytes.Replace(good, []byte(`"number": 1`), []byte(`"number": "1"`), 1)
	require.NotEqual(t, good, wrongType)
	sig := webhook.Sign(hookSecret, good)

	tests := []struct {
		name   string
		event  string
		body   []byte
		sig    string
		status int
	}{
		{"genuine", "issue_comment", good, sig, http.StatusAccepted},
		{"no signature", "issue_comment", good, "", http.StatusUnauthorized},
		{"other secret", "issue_comment", good, webhook.Sign([]byte("guess"), good), http.StatusUnauthorized},
		{"body swapped under a genuine signature", "issue_comment", other, sig, http.StatusUnauthorized},
		{"sha1 header form", "issue_comment", good, "sha1=" + strings.TrimPrefix(sig, "sha256="), http.StatusUnauthorized},
		{"truncated signature", "issue_comment", good, sig[:len(sig)-2], http.StatusUnauthorized},
		{"signature not hex", "issue_comment", good, "sha256=" + strings.Repeat("zz", 32), http.StatusUnauthorized},
		{"truncated JSON", "issue_comment", good[:len(good)/2], webhook.Sign(hookSecret, good[:len(good)/2]), http.StatusBadRequest},
		{"wrong type", "issue_comment", wrongType, webhook.Sign(hookSecret, wrongType), http.StatusBadRequest},
		{"not JSON", "issue_comment", []byte("\xff\xfe<xml/>"), webhook.Sign(hookSecret, []byte("\xff\xfe<xml/>")), http.StatusBadRequest},
		{"event the bot ignores", "push", []byte(`{}`), webhook.Sign(hookSecret, []byte(`{}`)), http.StatusNoContent},
		{"event header lies", "issues", good, sig, http.StatusNoContent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.status, deliver(t, srv.URL, tc.event, tc.body, tc.sig))
		})
	}

	t.Run("over the cap", func(t *testing.T) {
		big := make([]byte, dispatch.MaxWebhookBytes+1)
		assert.Equal(t, http.StatusRequestEntityTooLarge, deliver(t, srv.URL, "issue_comment", big, webhook.Sign(hookSecret, big)))
	})
	t.Run("no secret configured refuses everything", func(t *testing.T) {
		open := httptest.NewServer(d.WebhookHandler(nil, 10*time.Second))
		defer open.Close()
		assert.Equal(t, http.StatusUnauthorized, deliver(t, open.URL, "issue_comment", good, webhook.Sign(nil, good)))
	})
}

func deliver(t *testing.T, url, event string, body []byte, sig string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url+"/webhook", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", "d-1")
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}
