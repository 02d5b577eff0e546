package refstate_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

const markRef = "refs/mention-runner/marker"

// TestSweepMark: a sweep's push sets its marker to the hour's shared
// commit when it deletes (no write of its own), leaves it when it deletes
// nothing or it holds that commit already, and a marker another writer
// moved is refused without harm to the deletes.
func TestSweepMark(t *testing.T) {
	for _, tc := range []struct {
		name     string
		expired  int
		old      string // "hour": the marker holds this hour's commit; "moved": another's
		sent     bool
		marked   bool
		writes   int
		markerAt string // "hour", "" (missing), "moved"
	}{
		{name: "deletes: set in the push", expired: 3, sent: true, marked: true, writes: 1, markerAt: "hour"},
		{name: "nothing expired: left missing", expired: 0},
		{name: "at this hour's commit: not sent", expired: 3, old: "hour", writes: 1, markerAt: "hour"},
		{name: "moved by another: refused, deletes made", expired: 3, old: "moved", sent: true, writes: 1, markerAt: "moved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSweepFixture(t, tc.expired, 2, 0, 0)
			ctx := ctxT(t)
			var moved string
			mark := &refstate.SweepMark{Ref: markRef, Status: "swept"}
			switch tc.old {
			case "hour":
				require.NoError(t, f.st.MarkShared(ctx, markRef, "swept", ""))
				cur, err := f.st.Read(ctx, markRef)
				require.NoError(t, err)
				mark.Old = cur.Commit
			case "moved":
				m, err := f.st.NewMark(ctx, "swept", "another", "")
				require.NoError(t, err)
				_, _, err = f.st.Create(ctx, markRef, m)
				require.NoError(t, err)
				moved = m.Commit
				mark.Old = f.expired[keys(f.expired)[0]] // read before the other writer moved it
			}
			opt := f.options()
			opt.Mark = mark
			before := f.writes()
			res, err := f.st.Sweep(ctx, opt)
			require.NoError(t, err)
			assert.Len(t, res.Deleted, tc.expired)
			assert.Empty(t, res.Errors, "a marker refused is no error of the sweep's")
			assert.Equal(t, tc.sent, res.MarkSent)
			assert.Equal(t, tc.marked, res.Marked)
			assert.Equal(t, tc.writes, f.writes()-before)
			assert.Equal(t, f.survivors(), f.refs(t))
			cur, err := f.st.ReadRecent(ctx, markRef, "swept", 48*time.Hour)
			require.NoError(t, err)
			switch tc.markerAt {
			case "":
				assert.Nil(t, cur)
			case "moved":
				require.NotNil(t, cur)
				assert.Equal(t, moved, cur.Commit)
			default:
				require.NotNil(t, cur)
				assert.Equal(t, f.clk.Now().UTC().Truncate(time.Hour), cur.At, "dated at the hour's start")
				assert.Equal(t, "swept", cur.Status)
			}
		})
	}
}

// TestSweepUnder: a sweep narrowed to a slice lists and deletes only
// the refs whose name starts with it.
func TestSweepUnder(t *testing.T) {
	f := newSweepFixture(t, 12, 2, 0, 0)
	ctx := ctxT(t)
	opt := f.options()
	opt.Under = "old-1" // old-1, old-10, old-11
	res, err := f.st.Sweep(ctx, opt)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Listed)
	assert.ElementsMatch(t, []string{sweepPrefix + "old-1", sweepPrefix + "old-10", sweepPrefix + "old-11"}, res.Deleted)
	assert.Len(t, f.refs(t), 12-3+2)
	opt.Under = "a/b"
	_, err = f.st.Sweep(ctx, opt)
	assert.ErrorContains(t, err, "slice")
}

// TestReadRecent: a marker at a shared commit of the last hours costs one
// request (its commit is known by its id); an older one is read.
func TestReadRecent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		age   time.Duration
		reads int // GET requests
	}{
		{"this hour", 0, 1},
		{"a day ago", 24 * time.Hour, 1},
		{"older than asked", 72 * time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, sim, clk := newPushStore(t, false)
			ctx := ctxT(t)
			require.NoError(t, st.MarkShared(ctx, markRef, "swept", ""))
			clk.Advance(tc.age)
			reader, err := refstate.New(st.Client, "ops/control", clk.Now) // another process: knows no commit
			require.NoError(t, err)
			from := len(sim.Requests())
			cur, err := reader.ReadRecent(ctx, markRef, "swept", 48*time.Hour)
			require.NoError(t, err)
			require.NotNil(t, cur)
			assert.Equal(t, clk.Now().Add(-tc.age).UTC().Truncate(time.Hour), cur.At)
			assert.Equal(t, tc.reads, gets(sim, from))
		})
	}
}

// TestMarkSharedLostAnswer: a marker push whose answer is lost is not
// repeated, and the next one finds the ref where the lost one left it.
func TestMarkSharedLostAnswer(t *testing.T) {
	st, sim, _ := newPushStore(t, true)
	ctx := ctxT(t)
	sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true})
	from := len(sim.Requests())
	assert.Error(t, st.MarkShared(ctx, markRef, "swept", ""))
	assert.Equal(t, 1, pushes(sim, from), "sent once")
	cur, err := st.Read(ctx, markRef)
	require.NoError(t, err)
	require.NotNil(t, cur, "the lost push landed")
	from = len(sim.Requests())
	require.NoError(t, st.MarkShared(ctx, markRef, "swept", cur.Commit))
	assert.Equal(t, 0, pushes(sim, from), "at the hour's commit already: nothing sent")
}

func gets(sim *githubsim.Sim, from int) (n int) {
	for _, r := range sim.Requests()[from:] {
		if r.Method == http.MethodGet && strings.Contains(r.Path, "/git/") {
			n++
		}
	}
	return n
}
