package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStderrRedacted: the real dispatcher's log stream holds no value of
// a secret variable from its environment, even where a message quotes a
// setting that happens to hold it; a *_FILE path stays readable.
func TestStderrRedacted(t *testing.T) {
	bin := dispatcherBinary(t)
	const secret = "acme/s3cret-control-value"
	tests := []struct {
		name       string
		vars       []string
		gone, kept string
	}{
		{"a setting quoting a secret's value", []string{"DEMO_SECRET=" + secret, "CONTROL_REPO=" + secret + "/extra", "BOT_TOKEN=not-checked-here-0000", "BOT_LOGIN=mrbot"},
			secret, "[REDACTED"},
		{"a token file's path", []string{"BOT_TOKEN_FILE=/nonexistent/bot-token", "CONTROL_REPO=acme/control"},
			"", "/nonexistent/bot-token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "once")
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ALLOWED_USERS=alice"}, tc.vars...)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "a bad setting stops it: %s", out)
			if tc.gone != "" {
				assert.NotContains(t, string(out), tc.gone)
			}
			assert.Contains(t, string(out), tc.kept, "%s", out)
		})
	}
}
