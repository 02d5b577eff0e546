package shardstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

const (
	ts1 = "2025-03-01T11:59:00Z"
	ts2 = "2025-03-01T12:01:00Z"
)

func at(p Piece, ts string) Piece { p.Timestamp = ts; return p }

// storedTimestamp reads what the ref of index holds now.
func storedTimestamp(t *testing.T, f *fixture, index int) (ShardMeta, string) {
	t.Helper()
	ctx := context.Background()
	sha, err := f.store.refCommit(ctx, contract.ShardRef(job, index))
	require.NoError(t, err)
	m, err := f.store.describeShard(ctx, job, index, sha)
	require.NoError(t, err)
	return m, sha
}

func TestPutAcrossDispatches(t *testing.T) {
	eachMode(t, func(t *testing.T, newFixture func(testing.TB) *fixture) {
		p := pieces(t, job, 2)[0]
		other := p
		other.B64 = "AAAA" + p.B64[4:]
		tests := []struct {
			name          string
			first, second Piece
			want          string // duplicate | replaced | superseded | conflict
			wantTS        string // timestamp the ref holds afterwards
		}{
			{"same piece, same dispatch", at(p, ts1), at(p, ts1), "duplicate", ts1},
			{"other content, same dispatch", at(p, ts1), at(other, ts1), "conflict", ts1},
			{"other content, newer dispatch", at(p, ts1), at(other, ts2), "replaced", ts2},
			{"same content, newer dispatch", at(p, ts1), at(p, ts2), "replaced", ts2},
			{"other content, older dispatch", at(p, ts2), at(other, ts1), "superseded", ts2},
			{"same content, older dispatch", at(p, ts2), at(p, ts1), "superseded", ts2},
			{"other content, same instant in another notation", at(p, ts1), at(other, "2025-03-01T12:59:00+01:00"), "conflict", ts1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f := newFixture(t)
				ctx := context.Background()
				first, err := f.store.Put(ctx, tt.first)
				require.NoError(t, err)
				f.clock.Advance(time.Minute)
				st, err := f.store.Put(ctx, tt.second)
				if tt.want == "conflict" {
					require.Error(t, err)
					assert.True(t, transport.IsKind(err, transport.KindConflictingDuplicate), err)
				} else {
					require.NoError(t, err)
					assert.Equal(t, tt.want == "duplicate", st.Duplicate)
					assert.Equal(t, tt.want == "replaced", st.Replaced)
					assert.Equal(t, tt.want == "superseded", st.Superseded)
				}
				m, sha := storedTimestamp(t, f, 0)
				assert.Equal(t, tt.wantTS, m.Timestamp)
				switch tt.want {
				case "replaced":
					assert.Equal(t, st.Commit, sha)
					assert.Equal(t, tt.second.B64, readPiece(t, f, sha).B64)
				case "superseded":
					assert.Empty(t, st.Commit)
					assert.Equal(t, tt.first.Timestamp, st.NewerTimestamp)
					assert.Equal(t, first.Commit, sha)
				default:
					assert.Equal(t, first.Commit, sha)
				}
			})
		}
	})
}

func readPiece(t *testing.T, f *fixture, commit string) Piece {
	t.Helper()
	got, err := f.store.Read(context.Background(), &Job{ID: job, Shards: map[int]string{0: commit}}, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0]
}

// Several newer dispatches replacing the same old piece at once: the
// newest always ends up stored (the replacement is a compare-and-swap).
func TestPutConcurrentReplacements(t *testing.T) {
	eachMode(t, func(t *testing.T, newFixture func(testing.TB) *fixture) {
		for round := range 3 {
			t.Run(fmt.Sprint(round), func(t *testing.T) {
				f := newFixture(t)
				ctx := context.Background()
				p := pieces(t, job, 2)[0]
				_, err := f.store.Put(ctx, at(p, ts1))
				require.NoError(t, err)
				var wg sync.WaitGroup
				errs := make([]error, 4)
				for k := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						q := at(p, fmt.Sprintf("2025-03-01T12:0%d:00Z", k+1))
						q.B64 = fmt.Sprintf("QUF%d", k) + p.B64[4:]
						_, errs[k] = f.store.Put(ctx, q)
					}()
				}
				wg.Wait()
				for _, err := range errs {
					require.NoError(t, err)
				}
				m, _ := storedTimestamp(t, f, 0)
				assert.Equal(t, "2025-03-01T12:04:00Z", m.Timestamp)
			})
		}
	})
}

func TestDescribeNewestSelect(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := pieces(t, job, 4) // an attempt that failed after two shards
	for _, p := range a[:2] {
		_, err := f.store.Put(ctx, at(p, ts1))
		require.NoError(t, err)
	}
	_, err := f.store.Put(ctx, at(a[3], ts1))
	require.NoError(t, err)
	b := pieces(t, job, 3) // the re-sent attempt, cut differently
	var own *Stored
	for _, p := range b[:2] {
		own, err = f.store.Put(ctx, at(p, ts2))
		require.NoError(t, err)
		assert.True(t, own.Replaced)
	}
	j, err := f.store.List(ctx, job)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 3}, j.Indices())

	f.sim.ResetRequests()
	require.NoError(t, f.store.Describe(ctx, j, own))
	assert.Len(t, f.sim.Requests(), 2, "own shard described without a request")
	assert.Equal(t, ts2, j.Newest())
	cur := j.Select(ts2)
	assert.Equal(t, []int{0, 1}, cur.Indices())
	assert.Equal(t, []int{2}, cur.Missing(3))
	assert.Equal(t, []int{3}, j.Select(ts1).Indices())

	last, err := f.store.Put(ctx, at(b[2], ts2))
	require.NoError(t, err)
	j, err = f.store.List(ctx, job)
	require.NoError(t, err)
	require.NoError(t, f.store.Describe(ctx, j, last))
	cur = j.Select(ts2)
	require.Empty(t, cur.Missing(3))
	f.sim.ResetRequests()
	got, err := f.store.Read(ctx, cur, last)
	require.NoError(t, err)
	assert.Len(t, f.sim.Requests(), 2, "described shards cost one request (the blob)")
	for i := range got {
		assert.Equal(t, at(b[i], ts2), got[i])
	}
}

func FuzzCompareTimestamps(f *testing.F) {
	for _, s := range [][2]string{{ts1, ts2}, {ts1, ts1}, {"2025-03-01T12:59:00+01:00", ts1}, {"", ts1}, {"2025-03-01T11:59:00.5Z", "x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, errA := CompareTimestamps(a, b)
		ba, errB := CompareTimestamps(b, a)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("errors differ: %v / %v", errA, errB)
		}
		if errA == nil && ab != -ba {
			t.Fatalf("not antisymmetric: %d, %d", ab, ba)
		}
	})
}
