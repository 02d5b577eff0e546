package shardstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

const job = "0b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10"

func pieces(t testing.TB, jobID string, n int) []Piece {
	t.Helper()
	raw := []byte(`{"k":"` + strings.Repeat("x", 3*n*5) + `"}`)
	b64 := base64.StdEncoding.EncodeToString(raw)
	// cut at multiples of 4 characters, n pieces
	size := (len(b64)/n + 3) / 4 * 4
	var out []Piece
	for i := 0; i < n; i++ {
		lo, hi := i*size, min((i+1)*size, len(b64))
		if i == n-1 {
			hi = len(b64)
		}
		out = append(out, Piece{JobID: jobID, Index: i, Total: n, Timestamp: "2025-03-01T11:59:00Z", B64: b64[lo:hi]})
	}
	return out
}

func TestPutListLockRead(t *testing.T) {
	eachMode(t, func(t *testing.T, newFixture func(testing.TB) *fixture) {
		f := newFixture(t)
		ctx := context.Background()
		ps := pieces(t, job, 3)
		var last *Stored
		for _, p := range ps {
			st, err := f.store.Put(ctx, p)
			require.NoError(t, err)
			assert.False(t, st.Duplicate)
			last = st
		}
		j, err := f.store.List(ctx, job)
		require.NoError(t, err)
		assert.Empty(t, j.Missing(3))
		assert.Empty(t, j.Lock)
		assert.Equal(t, []int{0, 1, 2}, j.Indices())

		h := Holder{JobID: job, RunID: "101", Attempt: "1", URL: "https://github.com/acme/control/actions/runs/101"}
		lr, err := f.store.Lock(ctx, j, h, last.Tree)
		require.NoError(t, err)
		assert.True(t, lr.Won)
		assert.False(t, lr.Reentered)

		f.sim.ResetRequests()
		got, err := f.store.Read(ctx, j, last)
		require.NoError(t, err)
		assert.Equal(t, ps, got)
		assert.Len(t, f.sim.Requests(), 4, "two requests per shard not held locally")

		// another run loses and learns who holds the lock; a re-run of the winner re-enters
		lr2, err := f.store.Lock(ctx, j, Holder{JobID: job, RunID: "102", Attempt: "1"}, last.Tree) // stale listing: tries, fails
		require.NoError(t, err)
		assert.False(t, lr2.Won)
		assert.Equal(t, h, lr2.Holder)
		j, err = f.store.List(ctx, job)
		require.NoError(t, err)
		require.NotEmpty(t, j.Lock)
		f.sim.ResetRequests()
		lr2, err = f.store.Lock(ctx, j, Holder{JobID: job, RunID: "102", Attempt: "1"}, last.Tree)
		assert.Len(t, f.sim.Requests(), 1, "a listed lock is only read")
		require.NoError(t, err)
		assert.False(t, lr2.Won)
		assert.Equal(t, h, lr2.Holder)
		lr3, err := f.store.Lock(ctx, j, Holder{JobID: job, RunID: "101", Attempt: "2"}, last.Tree)
		require.NoError(t, err)
		assert.True(t, lr3.Won)
		assert.True(t, lr3.Reentered)
	})
}

func TestPutDuplicate(t *testing.T) {
	eachMode(t, func(t *testing.T, newFixture func(testing.TB) *fixture) {
		f := newFixture(t)
		ctx := context.Background()
		p := pieces(t, job, 2)[0]
		first, err := f.store.Put(ctx, p)
		require.NoError(t, err)
		f.clock.Advance(time.Minute) // a later run makes a different commit for the same piece
		again, err := f.store.Put(ctx, p)
		require.NoError(t, err)
		assert.True(t, again.Duplicate)
		assert.Equal(t, first.Commit, again.Commit, "the stored commit is kept")

		p.B64 = "AAAA" + p.B64[4:]
		_, err = f.store.Put(ctx, p)
		require.Error(t, err)
		assert.True(t, transport.IsKind(err, transport.KindConflictingDuplicate), err)
		assert.Contains(t, err.Error(), "different content")
	})
}

func TestLockRace(t *testing.T) {
	eachMode(t, func(t *testing.T, newFixture func(testing.TB) *fixture) {
		f := newFixture(t)
		ctx := context.Background()
		st, err := f.store.Put(ctx, pieces(t, job, 1)[0])
		require.NoError(t, err)
		const n = 8
		results := make([]*LockResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = f.store.Lock(ctx, &Job{ID: job}, Holder{JobID: job, RunID: fmt.Sprint(200 + i)}, st.Tree)
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		var winner string
		for i := range n {
			require.NoError(t, errs[i])
			if results[i].Won {
				winners++
				winner = results[i].Holder.RunID
			}
		}
		require.Equal(t, 1, winners)
		for i := range n {
			assert.Equal(t, winner, results[i].Holder.RunID, "every loser names the winner")
		}
	})
}

func TestReadCorrupt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st, err := f.store.Put(ctx, pieces(t, job, 2)[0])
	require.NoError(t, err)
	other, err := f.store.Put(ctx, pieces(t, "1b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10", 2)[1])
	require.NoError(t, err)

	mk := func(msg, tree string) string {
		sha, err := f.store.commit(ctx, tree, msg)
		require.NoError(t, err)
		return sha
	}
	tests := []struct {
		name, commit, want string
	}{
		{"foreign message", mk("hello\n", st.Tree), "does not start with"},
		{"other job's shard", other.Commit, "describes shard 1 of job 1b6f"},
		{"tree not the named blob", mk(formatShard(ShardMeta{JobID: job, Index: 1, Total: 2, Timestamp: "2025-03-01T11:59:00Z", Blob: other.Blob}), st.Tree), "its tree is not"},
		{"timestamp not RFC 3339", mk(formatShard(ShardMeta{JobID: job, Index: 1, Total: 2, Timestamp: "t", Blob: other.Blob}), other.Tree), "timestamp \"t\" is not RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &Job{ID: job, Shards: map[int]string{0: st.Commit, 1: tt.commit}}
			_, err := f.store.Read(ctx, j, nil)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Error(), tt.want)
			assert.Equal(t, contract.ShardRef(job, 1), ce.Ref)
		})
	}
}

func TestListUnknownRefs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st, err := f.store.Put(ctx, pieces(t, job, 2)[0])
	require.NoError(t, err)
	for _, r := range []string{contract.JobRefs(job) + "shards/01", contract.JobRefs(job) + "junk", contract.JobRefPrefix + job + "x/shards/0"} {
		_, _, err := f.gh.Git.CreateRef(ctx, "acme", "control", &github.Reference{Ref: github.String(r), Object: &github.GitObject{SHA: github.String(st.Commit)}})
		require.NoError(t, err)
	}
	j, err := f.store.List(ctx, job)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, j.Indices())
	assert.ElementsMatch(t, []string{contract.JobRefs(job) + "shards/01", contract.JobRefs(job) + "junk"}, j.Unknown)
	assert.Equal(t, []int{1}, j.Missing(2))
}

func TestSweep(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old := "2b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10"
	for _, p := range pieces(t, old, 3) {
		_, err := f.store.Put(ctx, p)
		require.NoError(t, err)
	}
	f.clock.Advance(25 * time.Hour)
	fresh := "3b6f4a53-8a63-5c2e-9b8e-3f6a3d1c2b10"
	for _, p := range pieces(t, fresh, 2) {
		_, err := f.store.Put(ctx, p)
		require.NoError(t, err)
	}
	// our own job's refs are skipped even when stale
	f.clock.Advance(-25 * time.Hour)
	_, err := f.store.Put(ctx, pieces(t, job, 1)[0])
	require.NoError(t, err)
	f.clock.Advance(25 * time.Hour)

	res, err := f.store.Sweep(ctx, SweepOptions{Skip: job, MaxChecks: 2, Rand: rand.New(rand.NewPCG(1, 2))})
	require.NoError(t, err)
	assert.Equal(t, 6, res.Listed)
	assert.Equal(t, 2, res.Checked, "bounded work per run")

	res, err = f.store.Sweep(ctx, SweepOptions{Skip: job})
	require.NoError(t, err)
	assert.Empty(t, res.Errors)
	assert.Empty(t, f.sim.Refs(control, contract.JobRefs(old)))
	assert.Len(t, f.sim.Refs(control, contract.JobRefs(fresh)), 2)
	assert.Len(t, f.sim.Refs(control, contract.JobRefs(job)), 1)

	require.NoError(t, f.store.DeleteJob(ctx, fresh))
	assert.Empty(t, f.sim.Refs(control, contract.JobRefs(fresh)))
	require.NoError(t, f.store.DeleteJob(ctx, fresh), "deleting an ended job again is fine")
}

func TestGitObjectIDs(t *testing.T) {
	assert.Equal(t, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", blobSHA(nil))
	_, ok := treeSHA("nothex")
	assert.False(t, ok)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(stdin string, args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = []string{"GIT_DIR=" + dir, "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	run("", "init", "--bare", "-q", dir)
	content := "eyJrIjoieCJ9"
	blob := run(content, "hash-object", "-w", "--stdin")
	assert.Equal(t, blob, blobSHA([]byte(content)))
	tree := run("100644 blob "+blob+"\t"+pieceFile+"\n", "mktree")
	got, ok := treeSHA(blob)
	assert.True(t, ok)
	assert.Equal(t, tree, got)
}

func TestRefNames(t *testing.T) {
	assert.Equal(t, "refs/mention-runner/jobs/j/shards/3", contract.ShardRef("j", 3))
	assert.Equal(t, "refs/mention-runner/jobs/j/lock", contract.LockRef("j"))
	_, err := New(nil, "nope", nil)
	assert.Error(t, err)
}
