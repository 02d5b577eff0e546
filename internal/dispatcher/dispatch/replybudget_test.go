package dispatch

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// triggerIn is the issue_comment trigger of comment id on repo#number, as
// a webhook delivers it.
func (e *env) triggerIn(repo string, number int, id int64) *Trigger {
	e.t.Helper()
	p := map[string]any{"action": "created", "repository": e.raw("repos/" + repo),
		"issue":   e.raw(fmt.Sprintf("repos/%s/issues/%d", repo, number)),
		"comment": e.raw(fmt.Sprintf("repos/%s/issues/comments/%d", repo, id))}
	b, err := json.Marshal(p)
	require.NoError(e.t, err)
	t, err := DecodeEvent("issue_comment", b)
	require.NoError(e.t, err)
	return t
}

// mentionIn posts body as author on a new issue of repo (made when
// missing) and returns its trigger.
func (e *env) mentionIn(repo, author, body string) *Trigger {
	e.t.Helper()
	if _, err := e.sim.AddRepo(repo, false); err != nil {
		require.ErrorContains(e.t, err, "exists")
	}
	n, err := e.sim.CreateIssue(repo, "alice", "an issue", "x")
	require.NoError(e.t, err)
	c, err := e.sim.Comment(repo, n, author, body)
	require.NoError(e.t, err)
	return e.triggerIn(repo, n, c.GetID())
}

// botReplies counts the bot's comments on the issues of repos.
func (e *env) botReplies(repos ...string) int {
	n := 0
	for _, r := range repos {
		for i := 1; i <= 64; i++ {
			for _, c := range e.sim.Comments(r, i) {
				if c.GetUser().GetLogin() == bot {
					n++
				}
			}
		}
	}
	return n
}

// TestReplyBudgetStrangerManyRepos: a user not in ALLOWED_USERS says "go
// away" twice in each of 15 repositories in one cycle: the block is
// written, and the bot replies at most DefaultReplyPerAuthor times in
// all (30 times without the per-author budget: 2 per repository), each
// silenced reply logged and named in its decision.
func TestReplyBudgetStrangerManyRepos(t *testing.T) {
	e := newEnv(t)
	e.sim.AddUser("mallory")
	d := e.dispatcher()
	var repos []string
	suppressed := 0
	for i := range 15 {
		repo := fmt.Sprintf("alice/r%02d", i)
		repos = append(repos, repo)
		for range 2 {
			dec, err := d.Handle(e.ctx(), e.mentionIn(repo, "mallory", "@mrbot go away"))
			require.NoError(t, err)
			assert.Equal(t, Block, dec.Decision, dec.Reason)
			if dec.ReplySuppressed != "" {
				suppressed++
			}
		}
	}
	require.NoError(t, d.Flush(e.ctx()))
	assert.Equal(t, DefaultReplyPerAuthor, e.botReplies(repos...), "replies to mallory in 15 repositories")
	assert.Equal(t, 30-DefaultReplyPerAuthor, suppressed)
	assert.Contains(t, e.logs.String(), `"msg":"reply suppressed"`)
	assert.Contains(t, e.logs.String(), "reply limit per author 3")
}

// TestReplyBudgetRateLimitedAndBadCfg: with ALLOWED_USERS=*, 12 mentions
// over the run limit, or 12 with a bad !cfg, get at most
// DefaultReplyPerAuthor replies (12 without the budget); the count is
// kept in the rate state, so a second dispatcher process (a restart)
// goes on from it. The account-wide budget bounds many authors alike.
func TestReplyBudgetRateLimitedAndBadCfg(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		first      string // the decision of the first mention
	}{
		{"rate-limited", "@mrbot look at this", Dispatch},
		{"bad cfg", "@mrbot !cfg comment-onyl please", Reply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.Allowed = ParseAllowList("*")
			one := func(c *Config) { c.RatePerHour = 1 }
			d := e.dispatcher(one)
			for i := range 12 {
				if i == 6 { // another process takes over from the state file
					require.NoError(t, d.Flush(e.ctx()))
					d = e.dispatcher(one)
				}
				dec, err := d.Handle(e.ctx(), e.mentionIn(proj, "bob", tc.body))
				require.NoError(t, err)
				if i == 0 {
					assert.Equal(t, tc.first, dec.Decision, dec.Reason)
				}
			}
			require.NoError(t, d.Flush(e.ctx()))
			// a run itself posts nothing from the dispatcher
			assert.Equal(t, DefaultReplyPerAuthor, e.botReplies(proj), "replies to 12 %s mentions", tc.name)
		})
	}
	t.Run("account-wide", func(t *testing.T) {
		e := newEnv(t)
		e.cfg.Allowed = ParseAllowList("*")
		d := e.dispatcher(func(c *Config) { c.ReplyPerHour = 5 })
		for i := range 10 {
			u := fmt.Sprintf("user%d", i)
			e.sim.AddUser(u)
			_, err := d.Handle(e.ctx(), e.mentionIn(proj, u, "@mrbot !cfg nonsense-flag"))
			require.NoError(t, err)
		}
		assert.Equal(t, 5, e.botReplies(proj), "10 authors, reply limit 5 for the account")
		assert.Contains(t, e.logs.String(), "(reply limit 5)")
	})
}

// TestNoReplyInBlockedRepo: carol blocks carol/* from carol/spam1 and
// gets the one confirmation; after it the bot never replies there again:
// not to her "go away" again, not to a "come back" by someone who cannot
// lift the block, not to an allowed user's mention or bad !cfg.
func TestNoReplyInBlockedRepo(t *testing.T) {
	e := newEnv(t)
	e.cfg.Allowed = ParseAllowList("alice,carol")
	d := e.dispatcher()
	dec, err := d.Handle(e.ctx(), e.mentionIn("carol/spam1", "carol", "@mrbot go away"))
	require.NoError(t, err)
	require.Equal(t, Block, dec.Decision, dec.Reason)
	require.Equal(t, 1, e.botReplies("carol/spam1"), "the one confirmation")
	for _, m := range []struct{ author, body string }{
		{"carol", "@mrbot go away"},
		{"bob", "@mrbot come back"},
		{"carol", "@mrbot go away"},
		{"alice", "@mrbot please look"},
		{"alice", "@mrbot !cfg nonsense"},
		{"bob", "@mrbot go away"},
	} {
		dec, err := d.Handle(e.ctx(), e.mentionIn("carol/spam1", m.author, m.body))
		require.NoError(t, err)
		assert.NotEqual(t, Dispatch, dec.Decision, dec.Reason)
	}
	require.NoError(t, d.Flush(e.ctx()))
	assert.Equal(t, 1, e.botReplies("carol/spam1"), "no reply after the confirmation: %s", e.logs.String())
	assert.Contains(t, e.logs.String(), "carol/spam1 is blocked by the opt-out list")
}
