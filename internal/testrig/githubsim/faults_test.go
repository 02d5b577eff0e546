package githubsim

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPathMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"", "/anything", true},
		{"*", "/anything/else", true},
		{"/repos/*/*/issues/*/comments", "/repos/a/b/issues/1/comments", true},
		{"/repos/*/*/issues/*/comments", "/repos/a/b/issues/1", false},
		{"/repos/*", "/repos/a/b/issues/1", true},
		{"/repos/*", "/user", false},
		{"/repos/a/b", "/repos/a/b/issues", false},
		{"/repos/*/*/git/refs*", "/repos/a/b/git/refs/heads/x", true},
		{"/user", "/user", true},
		{"[", "/user", false},
	} {
		assert.Equal(t, tc.want, pathMatches(tc.pattern, tc.path), "%q vs %q", tc.pattern, tc.path)
	}
}

func TestFaultKinds(t *testing.T) {
	for _, tc := range []struct {
		kind   FaultKind
		status int // 0: transport error expected
	}{
		{FaultStatus500, 500},
		{FaultStatus502, 502},
		{FaultStatus503, 503},
		{FaultSecondaryLimit, 403},
		{FaultReset, 0},
		{FaultHang, 0},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			// Rate 1 rather than OnCall: net/http retries an idempotent request
			// once when a reused connection dies before answering.
			w.sim.AddFault(Fault{Method: "GET", Path: "/repos/*/*", Kind: tc.kind, OnCall: 2, Delay: 10 * time.Millisecond})
			_, _, err := w.gh["bot"].Repositories.Get(ctx, "alice", "app")
			require.NoError(t, err, "first call passes")
			if tc.status == 0 {
				w.sim.AddFault(Fault{Method: "GET", Path: "/repos/*/*", Kind: tc.kind, Rate: 1, Delay: 10 * time.Millisecond})
			}
			_, _, err = w.gh["bot"].Repositories.Get(ctx, "alice", "app")
			require.Error(t, err)
			if tc.status != 0 {
				assert.Equal(t, tc.status, statusOf(err))
			} else {
				assert.Zero(t, statusOf(err), "connection error: %v", err)
			}
			if tc.kind == FaultSecondaryLimit {
				var ab *github.AbuseRateLimitError
				require.ErrorAs(t, err, &ab)
				require.NotNil(t, ab.RetryAfter)
				assert.Equal(t, time.Minute, *ab.RetryAfter)
			} else {
				w.sim.ClearFaults()
				_, _, err = w.gh["bot"].Repositories.Get(ctx, "alice", "app")
				require.NoError(t, err, "passes once the fault is gone")
			}
			reqs := w.sim.Requests()
			require.GreaterOrEqual(t, len(reqs), 2)
			assert.Equal(t, string(tc.kind), reqs[1].Fault)
			assert.False(t, reqs[1].CountedRateLimit)
		})
	}
}

func TestFaultHangUntilClientGivesUp(t *testing.T) {
	w := newWorld(t)
	w.sim.AddFault(Fault{Path: "/user", Kind: FaultHang, Rate: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := w.gh["bot"].Users.Get(ctx, "")
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

func TestFaultSlowThenServes(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	w.sim.AddFault(Fault{Path: "/user", Kind: FaultSlow, Rate: 1, Delay: 5 * time.Millisecond})
	u, _, err := w.gh["bot"].Users.Get(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, "bot", u.GetLogin())
	assert.Equal(t, "slow", w.sim.Requests()[0].Fault)
	assert.Equal(t, http.StatusOK, w.sim.Requests()[0].Status)
}

// Faults by rate follow the seed: the same seed and request order give the
// same failures.
func TestFaultRateIsDeterministic(t *testing.T) {
	pattern := func() []bool {
		w := newWorld(t)
		ctx := ctxT(t)
		id := w.sim.AddFault(Fault{Path: "/user", Kind: FaultStatus503, Rate: 0.5})
		var out []bool
		for range 20 {
			_, _, err := w.gh["bot"].Users.Get(ctx, "")
			out = append(out, err != nil)
		}
		w.sim.RemoveFault(id)
		_, _, err := w.gh["bot"].Users.Get(ctx, "")
		require.NoError(t, err)
		return out
	}
	a, b := pattern(), pattern()
	assert.Equal(t, a, b)
	assert.Contains(t, a, true)
	assert.Contains(t, a, false)
}

func TestClearFaults(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	w.sim.AddFault(Fault{Kind: FaultStatus500, Rate: 1})
	_, _, err := w.gh["bot"].Users.Get(ctx, "")
	assert.Equal(t, 500, statusOf(err))
	w.sim.ClearFaults()
	_, _, err = w.gh["bot"].Users.Get(ctx, "")
	require.NoError(t, err)
}

func TestRequestLog(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	n, err := w.sim.CreateIssue("alice/app", "alice", "t", "")
	require.NoError(t, err)
	assert.Empty(t, w.sim.Requests(), "seeding is not logged")
	_, _, err = w.gh["bot"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("hello")})
	require.NoError(t, err)
	_, _, err = w.client("bad").Users.Get(ctx, "")
	require.Error(t, err)
	reqs := w.sim.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "POST", reqs[0].Method)
	assert.Equal(t, "/repos/alice/app/issues/1/comments", reqs[0].Path)
	assert.Equal(t, http.StatusCreated, reqs[0].Status)
	assert.JSONEq(t, `{"body":"hello"}`, string(reqs[0].ReqBody))
	assert.Contains(t, string(reqs[0].RespBody), `"body":"hello"`)
	assert.Equal(t, "bot", reqs[0].Login)
	assert.Equal(t, "tok-bot", reqs[0].Token)
	assert.True(t, reqs[0].CountedRateLimit)
	assert.Equal(t, http.StatusUnauthorized, reqs[1].Status)
	assert.False(t, reqs[1].CountedRateLimit)
	w.sim.ResetRequests()
	assert.Empty(t, w.sim.Requests())
}

// A fault with PerRequest fails one request (method, path and body: a
// client's retries of it) at most that many times, each fault on its own;
// another request is failed afresh.
func TestFaultPerRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults []Fault
		want   []int // statuses of the same comment posted again and again
	}{
		{"one fault", []Fault{{Kind: FaultStatus502, PerRequest: 2}}, []int{502, 502, 201, 201}},
		{"two faults", []Fault{{Kind: FaultStatus502, PerRequest: 1}, {Kind: FaultStatus503, PerRequest: 2}}, []int{502, 503, 503, 201}},
		{"no limit", []Fault{{Kind: FaultStatus502}}, []int{502, 502, 502, 502}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			n, err := w.sim.CreateIssue("alice/app", "alice", "t", "")
			require.NoError(t, err)
			for _, f := range tc.faults {
				f.Path, f.Rate, f.WritesOnly = "/repos/*", 1, true
				w.sim.AddFault(f)
			}
			post := func(body string) int {
				_, resp, _ := w.gh["bot"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String(body)})
				require.NotNil(t, resp)
				return resp.StatusCode
			}
			var got []int
			for range tc.want {
				got = append(got, post("same"))
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want[0], post("another"), "another body is another request")
		})
	}
}

// A fault with Mentions fails only requests whose path or body holds it,
// and OnCall counts only those.
func TestFaultMentions(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	n, err := w.sim.CreateIssue("alice/app", "alice", "t", "")
	require.NoError(t, err)
	w.sim.AddFault(Fault{Path: "/repos/*", Kind: FaultStatus502, OnCall: 2, Mentions: "target"})
	w.sim.AddFault(Fault{Path: "/repos/*", Kind: FaultStatus503, Rate: 1, Mentions: "/issues/99"})
	post := func(body string) int {
		_, resp, _ := w.gh["bot"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String(body)})
		require.NotNil(t, resp)
		return resp.StatusCode
	}
	assert.Equal(t, []int{201, 201, 201, 502, 201}, []int{post("other"), post("target 1"), post("other"), post("target 2"), post("target 3")})
	_, resp, _ := w.gh["bot"].Issues.Get(ctx, "alice", "app", 99)
	require.NotNil(t, resp)
	assert.Equal(t, 503, resp.StatusCode, "matched by its path")
}
