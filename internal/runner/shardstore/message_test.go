package shardstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sha40 = "0123456789abcdef0123456789abcdef01234567"

func TestShardMessageRoundTrip(t *testing.T) {
	m := ShardMeta{JobID: job, Index: 4, Total: 20, Timestamp: "2025-03-01T11:59:00Z", Blob: sha40}
	msg := formatShard(m)
	assert.True(t, strings.HasPrefix(msg, "mention-runner shard 5 of 20 for job "+job+"\n\n"))
	got, err := ParseShardMessage(msg)
	require.NoError(t, err)
	assert.Equal(t, m, got)
	// GitHub may hand the message back without the final newline, or with CRLF
	got, err = ParseShardMessage(strings.ReplaceAll(strings.TrimSuffix(msg, "\n"), "\n", "\r\n"))
	require.NoError(t, err)
	assert.Equal(t, m, got)
}

func TestParseShardMessageErrors(t *testing.T) {
	good := formatShard(ShardMeta{JobID: job, Index: 0, Total: 2, Timestamp: "ts", Blob: sha40})
	tests := []struct{ name, msg, want string }{
		{"foreign", "Initial commit\n", "does not start with"},
		{"empty", "", "does not start with"},
		{"missing field", strings.Replace(good, "timestamp: ts\n", "", 1), "want a title"},
		{"extra field", good + "x: y\n", "want a title"},
		{"reordered", strings.Replace(strings.Replace(good, "index: 0", "@@", 1), "total: 2", "index: 0", 1), "want field"},
		{"leading zero", strings.Replace(good, "index: 0", "index: 00", 1), "index"},
		{"negative", strings.Replace(good, "index: 0", "index: -1", 1), "index"},
		{"zero total", strings.Replace(good, "total: 2", "total: 0", 1), "total"},
		{"bad blob", strings.Replace(good, sha40, "xyz", 1), "not a git sha"},
		{"empty job", strings.Replace(good, "jobid: "+job, "jobid:", 1), "empty jobid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseShardMessage(tt.msg)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestLockMessage(t *testing.T) {
	h := Holder{JobID: job, RunID: "77", Attempt: "2", URL: "https://github.com/acme/control/actions/runs/77"}
	got, err := ParseLockMessage(formatLock(h))
	require.NoError(t, err)
	assert.Equal(t, h, got)
	assert.Equal(t, "run 77 (attempt 2) https://github.com/acme/control/actions/runs/77", h.String())

	local := Holder{JobID: job, RunID: "local-1"}
	got, err = ParseLockMessage(formatLock(local))
	require.NoError(t, err)
	assert.Equal(t, local, got)
	assert.Equal(t, "run local-1", local.String())

	_, err = ParseLockMessage(formatShard(ShardMeta{JobID: job, Total: 1, Timestamp: "t", Blob: sha40}))
	assert.Error(t, err)
	_, err = ParseLockMessage(strings.Replace(formatLock(h), "run: 77", "run:", 1))
	assert.ErrorContains(t, err, "empty jobid or run")
}

func FuzzParseShardMessage(f *testing.F) {
	f.Add(formatShard(ShardMeta{JobID: job, Index: 1, Total: 3, Timestamp: "2025-03-01T11:59:00Z", Blob: sha40}))
	f.Add(formatLock(Holder{JobID: job, RunID: "1"}))
	f.Add("mention-runner shard \n\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, msg string) {
		m, err := ParseShardMessage(msg)
		if err != nil {
			return
		}
		// whatever parses must survive a round trip
		again, err := ParseShardMessage(formatShard(m))
		if err != nil || again != m {
			t.Fatalf("round trip of %+v: %+v, %v", m, again, err)
		}
	})
}

func FuzzParseLockMessage(f *testing.F) {
	f.Add(formatLock(Holder{JobID: job, RunID: "1", Attempt: "1", URL: "https://x"}))
	f.Add("mention-runner lock for job\n\njobid: a\nrun: b\nattempt:\nurl:\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, msg string) {
		_, _ = ParseLockMessage(msg)
	})
}
