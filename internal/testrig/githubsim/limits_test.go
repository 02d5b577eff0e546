package githubsim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitHeadersAndPrimaryLimit(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	w.sim.SetPrimaryLimit(3)
	for i := 1; i <= 3; i++ {
		_, resp, err := w.gh["bot"].Repositories.Get(ctx, "alice", "app")
		require.NoError(t, err)
		assert.Equal(t, 3, resp.Rate.Limit)
		assert.Equal(t, 3-i, resp.Rate.Remaining)
		assert.Equal(t, "3", resp.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(i), resp.Header.Get("X-RateLimit-Used"))
		assert.Equal(t, "core", resp.Header.Get("X-RateLimit-Resource"))
		assert.Equal(t, w.now.Now().Add(time.Hour).Unix(), resp.Rate.Reset.Unix())
	}
	// A raw request, so go-github's own client-side blocking does not interfere.
	req, _ := http.NewRequestWithContext(ctx, "GET", w.base+"repos/alice/app", nil)
	req.Header.Set("Authorization", "token tok-bot")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"))
	assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Reset"))
	assert.Contains(t, string(body), "API rate limit exceeded for user ID")

	_, _, err = w.client("tok-bot").Repositories.Get(ctx, "alice", "app")
	var rl *github.RateLimitError
	require.ErrorAs(t, err, &rl, "go-github recognises the primary limit")
	// Other users have their own hour; the hour resets.
	_, _, err = w.gh["alice"].Repositories.Get(ctx, "alice", "app")
	require.NoError(t, err)
	w.now.Advance(time.Hour)
	_, _, err = w.client("tok-bot").Repositories.Get(ctx, "alice", "app")
	require.NoError(t, err)

	logged := w.sim.Requests()
	require.NotEmpty(t, logged)
	var counted, notCounted int
	for _, l := range logged {
		if l.CountedRateLimit {
			counted++
		} else {
			notCounted++
		}
	}
	assert.Equal(t, 5, counted)
	assert.Equal(t, 2, notCounted, "the two 403s are not counted")
}

func TestAnonymousLimit(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	w.sim.SetAnonymousLimit(1)
	_, resp, err := w.anon.Repositories.Get(ctx, "alice", "app")
	require.NoError(t, err)
	assert.Equal(t, 1, resp.Rate.Limit)
	_, _, err = w.client("").Repositories.Get(ctx, "alice", "app")
	var rl *github.RateLimitError
	require.ErrorAs(t, err, &rl)
}

func TestSecondaryLimit(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	n, err := w.sim.CreateIssue("alice/app", "alice", "t", "")
	require.NoError(t, err)
	w.sim.SetSecondaryLimit(2)
	for range 2 {
		_, _, err := w.gh["bot"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("x")})
		require.NoError(t, err)
	}
	_, _, err = w.gh["bot"].Issues.Get(ctx, "alice", "app", n)
	require.NoError(t, err, "reads are not content creation")
	w.now.Advance(20 * time.Second)
	_, _, err = w.gh["bot"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("x")})
	var ab *github.AbuseRateLimitError
	require.ErrorAs(t, err, &ab)
	require.NotNil(t, ab.RetryAfter)
	assert.Equal(t, 40*time.Second, *ab.RetryAfter)
	assert.Equal(t, http.StatusForbidden, ab.Response.StatusCode)

	_, _, err = w.gh["alice"].Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("x")})
	require.NoError(t, err, "limits are per account")
	w.now.Advance(41 * time.Second)
	_, _, err = w.client("tok-bot").Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("x")})
	require.NoError(t, err, "the window rolls")
	w.sim.SetSecondaryLimit(0)
	for range 3 {
		_, _, err := w.client("tok-bot").Issues.CreateComment(ctx, "alice", "app", n, &github.IssueComment{Body: github.String("x")})
		require.NoError(t, err)
	}
}

func TestDispatches(t *testing.T) {
	w := newWorld(t)
	ctx := ctxT(t)
	var hooked []string
	w.sim.OnDispatch(func(repo string, d Dispatch) {
		hooked = append(hooked, repo+":"+d.EventType)
		// Hooks may use the simulator (no lock held).
		assert.Len(t, w.sim.Dispatches(repo), len(hooked))
	})
	payload := json.RawMessage(`{"jobid":"j","context_b64":"e30=","timestamp":"2024-01-02T03:04:05Z"}`)
	resp, err := dispatch(ctx, w.gh["bot"], "acme", "control", "agent_small", &payload)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	ds := w.sim.Dispatches("acme/control")
	require.Len(t, ds, 1)
	assert.Equal(t, "agent_small", ds[0].EventType)
	assert.JSONEq(t, string(payload), string(ds[0].ClientPayload))
	assert.Contains(t, string(ds[0].Body), `"event_type":"agent_small"`)
	assert.Equal(t, []string{"acme/control:agent_small"}, hooked)

	big := func(n int) *json.RawMessage {
		p := json.RawMessage(`{"x":"` + strings.Repeat("a", n) + `"}`)
		return &p
	}
	props := func(n int) *json.RawMessage {
		m := map[string]int{}
		for i := range n {
			m["k"+strconv.Itoa(i)] = i
		}
		b, _ := json.Marshal(m)
		p := json.RawMessage(b)
		return &p
	}
	// Body overhead of {"event_type":"e","client_payload":{"x":""}} is 45 bytes.
	for _, tc := range []struct {
		name    string
		event   string
		payload *json.RawMessage
		status  int
	}{
		{"missing event_type", "", nil, http.StatusUnprocessableEntity},
		{"event_type 100 chars", strings.Repeat("e", 100), nil, http.StatusNoContent},
		{"event_type 101 chars", strings.Repeat("e", 101), nil, http.StatusUnprocessableEntity},
		{"10 properties", "e", props(10), http.StatusNoContent},
		{"11 properties", "e", props(11), http.StatusUnprocessableEntity},
		{"body 65535 bytes", "e", big(65535 - 45), http.StatusNoContent},
		{"body 65536 bytes", "e", big(65536 - 45), http.StatusUnprocessableEntity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := dispatch(ctx, w.gh["bot"], "acme", "control", tc.event, tc.payload)
			if tc.status == http.StatusNoContent {
				require.NoError(t, err)
				assert.Equal(t, tc.status, resp.StatusCode)
				return
			}
			assert.Equal(t, tc.status, statusOf(err), "%v", err)
		})
	}
	_, err = dispatch(ctx, w.gh["mallory"], "acme", "control", "x", nil)
	assert.Equal(t, http.StatusNotFound, statusOf(err), "private repo hidden")
	_, err = dispatch(ctx, w.gh["mallory"], "alice", "app", "x", nil)
	assert.Equal(t, http.StatusForbidden, statusOf(err), "readable but not writable")
}

func dispatch(ctx context.Context, c *github.Client, owner, repo, event string, payload *json.RawMessage) (*github.Response, error) {
	_, resp, err := c.Repositories.Dispatch(ctx, owner, repo, github.DispatchRequestOptions{EventType: event, ClientPayload: payload})
	if resp != nil && err == nil {
		return resp, nil
	}
	if err == nil {
		err = errors.New("no response")
	}
	return resp, err
}

// TestAccountLimit: one account's hourly requests can be set apart from
// everyone else's, as GitHub gives a workflow's GITHUB_TOKEN 1,000 an
// hour; the other accounts keep the primary limit.
func TestAccountLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     int // SetAccountLimit for the bot; 0 = none
		wantLimit int // what the bot's answers say
		botCalls  int // calls the bot makes
		botOK     int // of which answered
	}{
		{"override", 2, 2, 3, 2},
		{"none", 0, 5, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			w.sim.SetPrimaryLimit(5)
			w.sim.SetAccountLimit("BOT", tc.limit) // any case
			ok := 0
			for range tc.botCalls {
				req, _ := http.NewRequestWithContext(ctx, "GET", w.base+"repos/alice/app", nil)
				req.Header.Set("Authorization", "token tok-bot")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				assert.Equal(t, strconv.Itoa(tc.wantLimit), resp.Header.Get("X-RateLimit-Limit"))
				if resp.StatusCode == http.StatusOK {
					ok++
				}
			}
			assert.Equal(t, tc.botOK, ok)
			_, resp, err := w.gh["alice"].Repositories.Get(ctx, "alice", "app")
			require.NoError(t, err)
			assert.Equal(t, 5, resp.Rate.Limit, "other accounts keep the primary limit")
		})
	}
}
