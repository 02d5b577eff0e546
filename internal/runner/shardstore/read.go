package shardstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// CorruptError means a shard ref holds something this package did not
// write, or that does not match its own description.
type CorruptError struct {
	Ref    string
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("shardstore: %s is corrupt: %s", e.Ref, e.Reason)
}

// Read fetches every shard listed in j, in index order, including indices
// outside the caller's total so the assembler can refuse them. own, when
// non-nil, is the caller's stored piece, used without a request. A shard
// described in j.Meta costs one request (blob), any other two (commit,
// blob); both are checked against the commit's tree by recomputing git
// object ids.
func (s *Store) Read(ctx context.Context, j *Job, own *Stored) ([]Piece, error) {
	idx := j.Indices()
	out := make([]Piece, len(idx))
	errs := make([]error, len(idx))
	s.each(ctx, len(idx), func(ctx context.Context, k int) bool {
		i := idx[k]
		if own != nil && !own.Superseded && own.Index == i && own.Commit == j.Shards[i] {
			out[k] = own.Piece
			return true
		}
		m, ok := j.Meta[i]
		if !ok {
			if m, errs[k] = s.describeShard(ctx, j.ID, i, j.Shards[i]); errs[k] != nil {
				return false
			}
		}
		out[k], errs[k] = s.readBlob(ctx, m)
		return errs[k] == nil
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// describeShard reads and checks a shard's commit.
func (s *Store) describeShard(ctx context.Context, jobID string, index int, commit string) (ShardMeta, error) {
	ref := contract.ShardRef(jobID, index)
	c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, commit)
	if err != nil {
		return ShardMeta{}, fmt.Errorf("shardstore: read %s commit %s: %w", ref, commit, err)
	}
	m, err := ParseShardMessage(c.GetMessage())
	if err != nil {
		return ShardMeta{}, &CorruptError{Ref: ref, Reason: err.Error()}
	}
	if m.JobID != jobID || m.Index != index {
		return ShardMeta{}, &CorruptError{Ref: ref, Reason: fmt.Sprintf("its commit describes shard %d of job %s", m.Index, m.JobID)}
	}
	if _, err := time.Parse(time.RFC3339, m.Timestamp); err != nil {
		return ShardMeta{}, &CorruptError{Ref: ref, Reason: fmt.Sprintf("its commit's timestamp %q is not RFC 3339", m.Timestamp)}
	}
	if want, _ := treeSHA(m.Blob); c.GetTree().GetSHA() != want {
		return ShardMeta{}, &CorruptError{Ref: ref, Reason: "its tree is not the single piece its commit names"}
	}
	return m, nil
}

// readBlob fetches the piece a checked commit names.
func (s *Store) readBlob(ctx context.Context, m ShardMeta) (Piece, error) {
	ref := contract.ShardRef(m.JobID, m.Index)
	b, _, err := s.Client.Git.GetBlob(ctx, s.Owner, s.Name, m.Blob)
	if err != nil {
		return Piece{}, fmt.Errorf("shardstore: read %s blob %s: %w", ref, m.Blob, err)
	}
	content := []byte(b.GetContent())
	if b.GetEncoding() == "base64" {
		// GitHub wraps the base64 of blobs at 60 characters.
		if content, err = base64.StdEncoding.DecodeString(stripNewlines(b.GetContent())); err != nil {
			return Piece{}, &CorruptError{Ref: ref, Reason: "blob content is not valid base64: " + err.Error()}
		}
	}
	if blobSHA(content) != m.Blob {
		return Piece{}, &CorruptError{Ref: ref, Reason: "blob content does not match its sha"}
	}
	return Piece{JobID: m.JobID, Index: m.Index, Total: m.Total, Timestamp: m.Timestamp, B64: string(content)}, nil
}

func stripNewlines(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' && s[i] != '\r' {
			b = append(b, s[i])
		}
	}
	return string(b)
}
