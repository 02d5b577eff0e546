package shardstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Commit messages are small "key: value" documents under a title line. The
// parser is strict: the fields, their order and their formats are fixed, so
// a commit we did not write is refused instead of half-understood.

// ShardMeta is what a shard commit says about its piece.
type ShardMeta struct {
	JobID     string
	Index     int
	Total     int
	Timestamp string // the payload's timestamp, kept so the piece can be re-checked as sent
	Blob      string // git sha of the blob holding the base64 piece
}

// Holder names the run that holds a job's lock.
type Holder struct {
	JobID   string
	RunID   string // GITHUB_RUN_ID (or a random id outside Actions)
	Attempt string // GITHUB_RUN_ATTEMPT
	URL     string // link to the workflow run, "" when unknown
}

// String is "run <id> (attempt <n>) <url>", for log lines.
func (h Holder) String() string {
	s := "run " + h.RunID
	if h.Attempt != "" {
		s += " (attempt " + h.Attempt + ")"
	}
	if h.URL != "" {
		s += " " + h.URL
	}
	return s
}

const (
	shardTitle = "mention-runner shard"
	lockTitle  = "mention-runner lock"
)

func formatShard(m ShardMeta) string {
	return fmt.Sprintf("%s %d of %d for job %s\n\njobid: %s\nindex: %d\ntotal: %d\ntimestamp: %s\nblob: %s\n",
		shardTitle, m.Index+1, m.Total, m.JobID, m.JobID, m.Index, m.Total, m.Timestamp, m.Blob)
}

func formatLock(h Holder) string {
	return fmt.Sprintf("%s for job %s\n\njobid: %s\nrun: %s\nattempt: %s\nurl: %s\n",
		lockTitle, h.JobID, h.JobID, h.RunID, h.Attempt, h.URL)
}

// ParseShardMessage reads a shard commit's message.
func ParseShardMessage(msg string) (ShardMeta, error) {
	v, err := parseFields(msg, shardTitle, "jobid", "index", "total", "timestamp", "blob")
	if err != nil {
		return ShardMeta{}, err
	}
	m := ShardMeta{JobID: v[0], Timestamp: v[3], Blob: v[4]}
	if m.Index, err = natural(v[1]); err != nil {
		return ShardMeta{}, fmt.Errorf("shard commit: index: %w", err)
	}
	if m.Total, err = natural(v[2]); err != nil || m.Total == 0 {
		return ShardMeta{}, fmt.Errorf("shard commit: total %q must be a positive whole number", v[2])
	}
	if !isSHA(m.Blob) {
		return ShardMeta{}, fmt.Errorf("shard commit: blob %q is not a git sha", m.Blob)
	}
	if m.JobID == "" || m.Timestamp == "" {
		return ShardMeta{}, fmt.Errorf("shard commit: empty jobid or timestamp")
	}
	return m, nil
}

// ParseLockMessage reads a lock commit's message.
func ParseLockMessage(msg string) (Holder, error) {
	v, err := parseFields(msg, lockTitle, "jobid", "run", "attempt", "url")
	if err != nil {
		return Holder{}, err
	}
	if v[0] == "" || v[1] == "" {
		return Holder{}, fmt.Errorf("lock commit: empty jobid or run")
	}
	return Holder{JobID: v[0], RunID: v[1], Attempt: v[2], URL: v[3]}, nil
}

// parseFields checks the title line's prefix and returns the values of
// keys, which must appear exactly in that order after one blank line.
func parseFields(msg, title string, keys ...string) ([]string, error) {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(msg, "\r\n", "\n"), "\n"), "\n")
	if !strings.HasPrefix(lines[0], title+" ") {
		return nil, fmt.Errorf("commit message does not start with %q", title)
	}
	if len(lines) != len(keys)+2 || lines[1] != "" {
		return nil, fmt.Errorf("%s commit: want a title, a blank line and %d fields", title, len(keys))
	}
	vals := make([]string, len(keys))
	for i, k := range keys {
		v, ok := strings.CutPrefix(lines[i+2], k+":")
		if !ok {
			return nil, fmt.Errorf("%s commit: line %d: want field %q", title, i+3, k)
		}
		vals[i] = strings.TrimSpace(v)
	}
	return vals, nil
}

// natural parses a canonical non-negative decimal (no sign, no leading zero).
func natural(s string) (int, error) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a canonical whole number", s)
	}
	return strconv.Atoi(s)
}

func isSHA(s string) bool {
	return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == ""
}
