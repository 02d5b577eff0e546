package contract

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLogIssueFinal(t *testing.T) {
	const job = "0f41aabb-5d80-58bf-8978-bc4b171fa19f"
	final := LogIssueFinalMarker(job)
	tests := []struct {
		name string
		body string
		want bool
	}{
		{"last line", "Status: completed\n" + LogIssueMarker(job) + "\n" + final + "\n", true},
		{"trailing spaces and CRLF", "x\r\n" + final + "  \r\n\r\n", true},
		{"only the marker", final, true},
		{"running: no final marker", "Status: running\n" + LogIssueMarker(job) + "\n", false},
		{"quoted above the last line", final + "\n" + LogIssueMarker(job) + "\n", false},
		{"inside a line", "see " + final + "\n", false},
		{"another job's", "x\n" + LogIssueFinalMarker("other") + "\n", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, LogIssueFinal(tc.body, job))
		})
	}
}

// FuzzLogIssueFinal: any body reads as final once its job's marker is
// appended on a line of its own, and never panics.
func FuzzLogIssueFinal(f *testing.F) {
	f.Add("Status: completed\n", "job-1")
	f.Add("", "")
	f.Add("\n\n", "x")
	f.Fuzz(func(t *testing.T, body, job string) {
		_ = LogIssueFinal(body, job)
		if strings.ContainsAny(job, "\r\n") || strings.TrimSpace(job) != job {
			return
		}
		if !LogIssueFinal(body+"\n"+LogIssueFinalMarker(job)+"\n", job) {
			t.Fatalf("appended marker not read: %q %q", body, job)
		}
	})
}
