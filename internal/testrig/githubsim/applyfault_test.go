package githubsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An apply-then-fail fault stores the write and loses its answer: the
// client sees a 502, a reset or a timeout, and the comment is there.
func TestFaultAfterApply(t *testing.T) {
	for _, tc := range []struct {
		kind   FaultKind
		status int // 0: transport error
	}{
		{FaultStatus502, 502},
		{FaultReset, 0},
		{FaultHang, 0},
		{FaultHTML, 502},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			n, err := w.sim.CreateIssue("alice/app", "alice", "t", "")
			require.NoError(t, err)
			w.sim.AddFault(Fault{Path: "/repos/*", Kind: tc.kind, Rate: 1, AfterApply: true, WritesOnly: true, Delay: 20 * time.Millisecond})
			_, _, err = w.gh["bot"].Issues.Get(ctx, "alice", "app", n)
			require.NoError(t, err, "reads are not faulted by a writes-only fault")
			_, _, err = w.gh["bot"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("stored")})
			require.Error(t, err)
			assert.Equal(t, tc.status, statusOf(err), "%v", err)
			cs := w.sim.Comments("alice/app", n)
			require.Len(t, cs, 1, "the write was stored although its answer was lost")
			assert.Equal(t, "stored", cs[0].GetBody())
			// A reset reaches the client before the server logs the request.
			var logged *LoggedRequest
			require.Eventually(t, func() bool {
				for _, r := range w.sim.Requests() {
					if r.Method == http.MethodPost {
						logged = &r
					}
				}
				return logged != nil
			}, 5*time.Second, time.Millisecond)
			assert.Equal(t, "applied+"+string(tc.kind), logged.Fault)
			assert.Equal(t, http.StatusCreated, logged.AppliedStatus)
		})
	}
}

// A ref created under apply-then-fail exists: the retry sees 422.
func TestFaultAfterApplyRef(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	c, _, err := w.gh["bot"].Git.CreateCommit(ctx, "alice", "app", &github.Commit{Message: github.String("m"), Tree: &github.Tree{SHA: github.String("4b825dc642cb6eb9a060e54bf8d69288fbee4904")}}, nil)
	require.NoError(t, err, "git's empty tree needs no creating")
	id := w.sim.AddFault(Fault{Method: "POST", Path: "/repos/*/*/git/refs", Kind: FaultStatus502, OnCall: 1, AfterApply: true})
	ref := &github.Reference{Ref: github.String("refs/x/y"), Object: &github.GitObject{SHA: c.SHA}}
	_, _, err = w.gh["bot"].Git.CreateRef(ctx, "alice", "app", ref)
	assert.Equal(t, 502, statusOf(err))
	w.sim.RemoveFault(id)
	_, _, err = w.gh["bot"].Git.CreateRef(ctx, "alice", "app", ref)
	assert.Equal(t, 422, statusOf(err))
	got, _, err := w.gh["bot"].Git.GetRef(ctx, "alice", "app", "x/y")
	require.NoError(t, err)
	assert.Equal(t, c.GetSHA(), got.GetObject().GetSHA())
}

// An HTML page with status 200 is not JSON: go-github fails to decode it
// on calls that expect a body; callers that expect 204 must check.
func TestFaultHTML(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	w.sim.AddFault(Fault{Path: "/user", Kind: FaultHTML, Status: 200, Rate: 1})
	_, resp, err := w.gh["bot"].Users.Get(ctx, "")
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, 200, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"))
}

// Content limits are per account: two tokens of one account share them,
// and the hour limit holds when the minute one does not bite.
func TestContentLimitsPerAccount(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	n, err := w.sim.CreateIssue("alice/app", "alice", "t", "")
	require.NoError(t, err)
	w.sim.AddToken("tok-bot-2", "bot")
	other := w.client("tok-bot-2")
	w.sim.SetContentLimits(2, 3)
	comment := func(c *github.Client) error {
		_, _, err := c.Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("x")})
		return err
	}
	require.NoError(t, comment(w.gh["bot"]))
	require.NoError(t, comment(other))
	var ab *github.AbuseRateLimitError
	require.ErrorAs(t, comment(other), &ab, "the second token shares the account's minute")
	assert.Equal(t, time.Minute, *ab.RetryAfter)
	w.now.Advance(61 * time.Second)
	require.NoError(t, comment(w.gh["bot"]))
	w.now.Advance(61 * time.Second)
	require.ErrorAs(t, comment(w.gh["bot"]), &ab, "3 an hour")
	assert.Equal(t, time.Hour-122*time.Second, *ab.RetryAfter)
	require.NoError(t, comment(w.gh["alice"]), "another account is not limited")
	writes := w.sim.ContentWrites()
	assert.Len(t, writes["bot"], 3, "refused writes are not counted")
	assert.Equal(t, 2, BusiestWindow(writes["bot"], time.Minute))
	assert.Equal(t, 3, BusiestWindow(writes["bot"], time.Hour))
}

func TestBusiestWindow(t *testing.T) {
	at := func(s ...int) []time.Time {
		var out []time.Time
		for _, v := range s {
			out = append(out, time.Unix(int64(v), 0))
		}
		return out
	}
	for _, tc := range []struct {
		ts   []time.Time
		want int
	}{
		{nil, 0},
		{at(0), 1},
		{at(0, 59, 60, 61), 3},
		{at(0, 10, 20, 100, 110), 3}, {at(0, 70, 140), 1},
	} {
		assert.Equal(t, tc.want, BusiestWindow(tc.ts, time.Minute))
	}
}
