package ghclient

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const unicorn = `<!DOCTYPE html><html><head><title>Unicorn! &middot; GitHub</title></head><body>No server</body></html>`

// An HTML page is never success: a GET is retried, a POST fails with an
// error that says what came back, whatever the status.
func TestHTMLAnswer(t *testing.T) {
	html := func(code int) http.HandlerFunc {
		return body(code, unicorn, "Content-Type", "text/html; charset=utf-8")
	}
	for _, tc := range []struct {
		name     string
		method   string
		steps    []http.HandlerFunc
		wantReqs int
		wantErr  bool
	}{
		{"GET 200 HTML retried", "GET", []http.HandlerFunc{html(200), ok}, 2, false},
		{"GET 502 HTML retried", "GET", []http.HandlerFunc{html(502), ok}, 2, false},
		{"GET HTML every time", "GET", []http.HandlerFunc{html(200)}, 1 + DefaultMaxRetries, true},
		{"POST 200 HTML is an error", "POST", []http.HandlerFunc{html(200), ok}, 1, true},
		{"POST 502 HTML is an error", "POST", []http.HandlerFunc{html(502), ok}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{}, tc.steps...)
			var err error
			if tc.method == "GET" {
				err = f.get(context.Background())
			} else {
				err = f.post(context.Background(), "x")
			}
			assert.Equal(t, tc.wantReqs, f.script.count())
			if !tc.wantErr {
				require.NoError(t, err)
				return
			}
			var ue *UnexpectedAnswerError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, "Unicorn! &middot; GitHub", ue.Excerpt)
			assert.Contains(t, err.Error(), "text/html")
			assert.Contains(t, err.Error(), "instead of JSON")
		})
	}
}
