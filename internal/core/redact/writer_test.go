package redact

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriter(t *testing.T) {
	AddSecret("s3cr3t-value-for-writer")
	tests := []struct {
		name, in, gone string
	}{
		{"registered value", "token s3cr3t-value-for-writer in a log line\n", "s3cr3t-value-for-writer"},
		{"token shape", "auth ghp_0123456789abcdefghijABCDEFGHIJ012345 failed\n", "ghp_0123456789abcdefghijABCDEFGHIJ012345"},
		{"nothing secret", "dispatched 3 mentions\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			n, err := Writer(&b).Write([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, len(tc.in), n, "the caller's bytes count as written")
			if tc.gone == "" {
				assert.Equal(t, tc.in, b.String())
				return
			}
			assert.NotContains(t, b.String(), tc.gone)
			assert.Contains(t, b.String(), "[REDACTED")
		})
	}
}

// A JSON log record with a secret in a message and an attribute.
func TestWriterSlogJSON(t *testing.T) {
	AddSecret("another-s3cr3t-for-slog")
	var b bytes.Buffer
	log := slog.New(slog.NewJSONHandler(Writer(&b), nil))
	log.Warn("request failed with another-s3cr3t-for-slog", "header", "Bearer another-s3cr3t-for-slog")
	assert.NotContains(t, b.String(), "another-s3cr3t-for-slog")
	assert.Contains(t, b.String(), `"level":"WARN"`, "still one JSON record")
}
