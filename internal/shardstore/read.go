package shardstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
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
// non-nil, is the caller's stored piece, used without a request. Each other
// shard costs two requests (commit, blob); both are checked against the
// commit's tree by recomputing git object ids.
func (s *Store) Read(ctx context.Context, j *Job, own *Stored) ([]Piece, error) {
	idx := j.Indices()
	out := make([]Piece, len(idx))
	errs := make([]error, len(idx))
	par := s.Parallel
	if par <= 0 {
		par = 4
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for k, i := range idx {
		if own != nil && own.Index == i && own.Commit == j.Shards[i] {
			out[k] = own.Piece
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[k], errs[k] = s.readShard(ctx, j.ID, i, j.Shards[i])
			if errs[k] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	// Report the lowest failing index, preferring a real cause over the
	// cancellations it triggered in the others.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

func (s *Store) readShard(ctx context.Context, jobID string, index int, commit string) (Piece, error) {
	ref := ShardRef(jobID, index)
	c, _, err := s.Client.Git.GetCommit(ctx, s.Owner, s.Name, commit)
	if err != nil {
		return Piece{}, fmt.Errorf("shardstore: read %s commit %s: %w", ref, commit, err)
	}
	m, err := ParseShardMessage(c.GetMessage())
	if err != nil {
		return Piece{}, &CorruptError{Ref: ref, Reason: err.Error()}
	}
	if m.JobID != jobID || m.Index != index {
		return Piece{}, &CorruptError{Ref: ref, Reason: fmt.Sprintf("its commit describes shard %d of job %s", m.Index, m.JobID)}
	}
	if want, _ := treeSHA(m.Blob); c.GetTree().GetSHA() != want {
		return Piece{}, &CorruptError{Ref: ref, Reason: "its tree is not the single piece its commit names"}
	}
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
	return Piece{JobID: jobID, Index: index, Total: m.Total, Timestamp: m.Timestamp, B64: string(content)}, nil
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
