package publish

import (
	"strings"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// BenchmarkRecheck decides 1,000 queued writes (the hot path of publish
// before any network call).
func BenchmarkRecheck(b *testing.B) {
	entries := make([]outputs.Entry, 1000)
	for i := range entries {
		entries[i] = outputs.Entry{Index: i, Kind: policy.KindComment, Repo: "acme/widgets", Number: i%50 + 1, Body: strings.Repeat("text ", 200)}
	}
	p := policy.Effective(policy.Flags{}, policy.Ceilings{CommentLimit: 1000, IssueLimit: 1, PRLimit: 1, MaxWrites: 1000}, policy.Thread{}, blocked{})
	b.ReportAllocs()
	for b.Loop() {
		Recheck(entries, nil, nil, p)
	}
}

// BenchmarkWithNote adds the NOTE block to a body over GitHub's limit,
// which takes the cutting path.
func BenchmarkWithNote(b *testing.B) {
	n := noted{control: "ops/control", logIssue: 3, bot: "mrbot", jobID: "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"}
	body := strings.Repeat("A line of the agent's answer.\n", 3000)
	b.ReportAllocs()
	for b.Loop() {
		n.withNote(body, 1)
	}
}
