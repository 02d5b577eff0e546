package ghclient

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestParseRetryAfter(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"60", time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"99999999999", 24 * time.Hour, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{epoch.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Wed, 01 May 2024 12:00:30 GMT", 30 * time.Second, true},
		{"Wednesday, 01-May-24 12:00:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Wed May  1 12:00:30 2024", 30 * time.Second, true},          // asctime
		{epoch.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := parseRetryAfter(c.in, epoch)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "-3", "Wed, 01 May 2024 12:00:30 GMT", "x", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, epoch)
		if !ok {
			assert.Zero(t, d)
			return
		}
		assert.GreaterOrEqual(t, d, time.Duration(0))
	})
}

func TestURLs(t *testing.T) {
	cases := []struct {
		base, wantBase, wantUpload string
	}{
		{"", "https://api.github.com/", "https://uploads.github.com/"},
		{"https://api.github.com", "https://api.github.com/", "https://uploads.github.com/"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com/api/v3/", "https://ghe.example.com/api/uploads/"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/"},
	}
	for _, c := range cases {
		t.Run(c.base, func(t *testing.T) {
			cl, err := New(Options{BaseURL: c.base})
			require.NoError(t, err)
			assert.Equal(t, c.wantBase, cl.BaseURL.String())
			assert.Equal(t, c.wantUpload, cl.UploadURL.String())
		})
	}
	for _, bad := range []string{"api.github.com", "ftp://x/", "://", "/relative/"} {
		_, err := New(Options{BaseURL: bad})
		assert.Error(t, err, bad)
	}
}
