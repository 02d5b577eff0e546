package shardstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A dispatcher that fails partway through sending a job's shards sends them
// all again later under the same job id with a newer payload timestamp
// (an "attempt"), possibly cut differently. The refs can then hold pieces
// of several attempts; only the newest attempt's pieces form a context.

// CompareTimestamps compares two RFC 3339 payload timestamps: -1 when a is
// older than b, 0 when they are the same instant, +1 when a is newer.
func CompareTimestamps(a, b string) (int, error) {
	ta, err := time.Parse(time.RFC3339, a)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q is not RFC 3339", a)
	}
	tb, err := time.Parse(time.RFC3339, b)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q is not RFC 3339", b)
	}
	return ta.Compare(tb), nil
}

// Describe reads the commit of every listed shard not described yet and
// records what it says in j.Meta (own, when non-nil and listed, costs no
// request). Each commit is checked as Read checks it, and Read then needs
// only the blobs.
func (s *Store) Describe(ctx context.Context, j *Job, own *Stored) error {
	if j.Meta == nil {
		j.Meta = map[int]ShardMeta{}
	}
	idx := j.Indices()
	metas := make([]ShardMeta, len(idx))
	errs := make([]error, len(idx))
	todo := make([]bool, len(idx))
	for k, i := range idx {
		if _, ok := j.Meta[i]; ok {
			continue
		}
		if own != nil && !own.Superseded && own.Index == i && own.Commit == j.Shards[i] {
			j.Meta[i] = own.meta()
			continue
		}
		todo[k] = true
	}
	s.each(ctx, len(idx), func(ctx context.Context, k int) bool {
		if !todo[k] {
			return true
		}
		metas[k], errs[k] = s.describeShard(ctx, j.ID, idx[k], j.Shards[idx[k]])
		return errs[k] == nil
	})
	if err := firstError(errs); err != nil {
		return err
	}
	for k, i := range idx {
		if todo[k] {
			j.Meta[i] = metas[k]
		}
	}
	return nil
}

// Newest is the newest timestamp among the described shards ("" if none).
func (j *Job) Newest() string {
	var newest string
	for _, m := range j.Meta {
		// Described timestamps were parsed when read, so the comparison cannot fail.
		if c, err := CompareTimestamps(m.Timestamp, newest); newest == "" || err == nil && c > 0 {
			newest = m.Timestamp
		}
	}
	return newest
}

// Select is the part of j stored by the dispatch attempt with timestamp ts
// (same instant), lock included. Shards not described are left out.
func (j *Job) Select(ts string) *Job {
	out := &Job{ID: j.ID, Shards: map[int]string{}, Meta: map[int]ShardMeta{}, Lock: j.Lock, Unknown: j.Unknown}
	for i, m := range j.Meta {
		if c, err := CompareTimestamps(m.Timestamp, ts); err == nil && c == 0 {
			out.Shards[i], out.Meta[i] = j.Shards[i], m
		}
	}
	return out
}

func (st *Stored) meta() ShardMeta {
	return ShardMeta{JobID: st.JobID, Index: st.Index, Total: st.Total, Timestamp: st.Timestamp, Blob: st.Blob}
}

// each runs f(k) for k in 0..n-1 with at most s.Parallel at once; f
// returning false cancels the others.
func (s *Store) each(ctx context.Context, n int, f func(ctx context.Context, k int) bool) {
	par := s.Parallel
	if par <= 0 {
		par = DefaultParallel
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if !f(ctx, k) {
				cancel()
			}
		}()
	}
	wg.Wait()
}

// firstError is the lowest-index error, preferring a real cause over the
// cancellations it triggered in the others.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	return first
}
