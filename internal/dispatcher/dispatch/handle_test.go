package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

func TestHandleEachEventKind(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher()
	n := e.issue("plain issue")
	c := e.comment(n, "alice", "@mrbot !cfg here-only\nplease look")
	body := e.issue("@mrbot fix this issue")
	pr := e.pr("@mrbot review this PR", "")
	rv, err := e.sim.AddReview(proj, pr, "bob", "COMMENTED", "@mrbot what about this review?")
	require.NoError(t, err)
	rc, err := e.sim.AddReviewComment(proj, pr, 0, "alice", "README.md", 1, "@mrbot explain this line")
	require.NoError(t, err)

	cases := []struct {
		event  string
		number int
		id     int64
		key    string // context key holding the trigger list
	}{
		{"issue_comment", n, c.GetID(), "comments"},
		{"issues", body, 0, "issue"},
		{"pull_request", pr, 0, "pull_request"},
		{"pull_request_review", pr, rv, "reviews"},
		{"pull_request_review_comment", pr, rc, "review_comments"},
	}
	for _, tc := range cases {
		t.Run(tc.event, func(t *testing.T) {
			trig := e.trigger(tc.event, tc.number, tc.id)
			dec, err := d.Handle(e.ctx(), trig)
			require.NoError(t, err)
			assert.Equal(t, Dispatch, dec.Decision, dec.Reason)
			assert.Equal(t, transport.JobID(trig.NodeID), dec.JobID)
			require.NotNil(t, dec.Policy)
			ctxs := e.contexts()
			require.Contains(t, ctxs, dec.JobID)
			got := ctxs[dec.JobID]
			for _, k := range []string{"repository", "issue", "comments", "trigger_comment", "truncation"} {
				assert.Contains(t, got, k)
			}
			assert.Contains(t, got, tc.key)
			var tc2 struct {
				NodeID string `json:"node_id"`
			}
			require.NoError(t, json.Unmarshal(got["trigger_comment"], &tc2))
			assert.Equal(t, trig.NodeID, tc2.NodeID)
			assert.Equal(t, []string{contract.DispatchedRef(dec.JobID)}, e.sim.Refs(control, contract.DispatchedRef(dec.JobID)))
		})
	}
	assert.Equal(t, []string{"eyes"}, e.sim.Reactions(proj, c.GetID()))
	assert.Contains(t, e.logs.String(), `"decision":"dispatch"`)
	assert.Contains(t, e.logs.String(), `"jobid":"`+transport.JobID(c.GetNodeID())+`"`)
}

func TestHereOnlyPolicyInDecision(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot !cfg here-only\ndo it")
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.NotNil(t, dec.Policy)
	assert.True(t, dec.Policy.HereOnly)
	assert.Equal(t, 0, dec.Policy.IssueLimit)
}

func TestSilentIgnores(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher()
	n := e.issue("x")
	cases := []struct {
		name, author, body, want string
		edit                     bool
	}{
		{"own comment", bot, "@mrbot do it", "written by the bot", false},
		{"own comment any case", "MrBot", "@mrbot do it", "written by the bot", false},
		{"no mention", "alice", "nothing here", "no mention", false},
		{"mention in code", "alice", "`@mrbot` and\n```\n@mrbot\n```", "no mention", false},
		{"mention in quote", "alice", "> @mrbot do it", "no mention", false},
		{"longer login", "alice", "@mrbot-fan hi", "no mention", false},
		{"not allowed", "carol", "@mrbot do it", "not in ALLOWED_USERS", false},
		{"edited", "alice", "@mrbot do it", "edited", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := e.comment(n, tc.author, tc.body)
			trig := e.trigger("issue_comment", n, c.GetID())
			trig.Edited = tc.edit
			dec, err := d.Handle(e.ctx(), trig)
			require.NoError(t, err)
			assert.Equal(t, Ignore, dec.Decision)
			assert.Contains(t, dec.Reason, tc.want)
		})
	}
	assert.Empty(t, e.sim.Dispatches(control))
	assert.Len(t, e.sim.Comments(proj, n), len(cases), "ignores are silent: no reply")
}

func TestAllowListParsing(t *testing.T) {
	cases := []struct {
		in    string
		login string
		id    int64
		want  bool
	}{
		{"", "alice", 0, false},
		{"*", "anyone", 0, true},
		{"alice,bob", "BOB", 0, true},
		{" @alice , carol ", "carol", 0, true},
		{"alice", "alicex", 0, false},
		{",,", "alice", 0, false},
		// A pinned id (a freed login can be re-registered).
		{"alice:42", "alice", 42, true},
		{"alice:42", "alice", 43, false},        // someone else took the login
		{"alice:42", "alice", 0, false},         // id unknown: fail closed
		{"alice:42", "alice-renamed", 42, true}, // the same account, renamed
		{"alice:x42", "alice", 42, false},       // malformed id drops the entry
		{"alice:42,alice", "alice", 43, false},  // the pin wins over a bare repeat
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, ParseAllowList(tc.in).Allows(tc.login, tc.id), "%q allows %q (%d)", tc.in, tc.login, tc.id)
	}
}

func TestBlockedRepoIgnored(t *testing.T) {
	e := newEnv(t)
	store := &blockfile.Store{Client: e.gh, Repo: control}
	_, err := store.Update(e.ctx(), "seed", func(l *blocklist.List) bool { return l.Add([]string{"alice/*"}, "alice", "x", time.Now()) > 0 })
	require.NoError(t, err)
	n := e.issue("x")
	c := e.comment(n, "bob", "@mrbot do it")
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	assert.Contains(t, dec.Reason, `opt-out "alice/*"`)
	assert.Empty(t, e.sim.Dispatches(control))
	assert.Len(t, e.sim.Comments(proj, n), 1, "no reply on a blocked repo")
}

func TestInvalidCfgRepliesOnce(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher()
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot !cfg comment-onyl please")
	trig := e.trigger("issue_comment", n, c.GetID())
	dec, err := d.Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Equal(t, Reply, dec.Decision)
	assert.Contains(t, dec.Reason, "did you mean comment-only")
	cs := e.sim.Comments(proj, n)
	require.Len(t, cs, 2)
	assert.Contains(t, cs[1].GetBody(), "comment-onyl")
	assert.Contains(t, cs[1].GetBody(), "Valid `!cfg` flags")
	assert.Contains(t, cs[1].GetBody(), marker(contract.ReplyCfg, trig))

	// Seen again (a retry, a second dispatcher): no second reply.
	dec, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	// A retry after the claim ref was deleted (swept) finds the marker instead.
	require.NoError(t, d.states().Delete(e.ctx(), DedupeRef(dec.JobID)))
	dec, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Reply, dec.Decision)
	assert.Len(t, e.sim.Comments(proj, n), 2, "exactly one reply")
	assert.Empty(t, e.sim.Dispatches(control))
}

// TestStrayCfgRepliesOnce: a !cfg that is not the first mention's own
// stops the run with one reply naming it, as a bad flag does.
func TestStrayCfgRepliesOnce(t *testing.T) {
	for i, body := range []string{"@mrbot hi\n@mrbot !cfg here-only do X", "@mrbot ！cfg here-only"} {
		e := newEnv(t)
		n := e.issue("x")
		c := e.comment(n, "alice", body)
		dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
		require.NoError(t, err)
		assert.Equal(t, Reply, dec.Decision, i)
		assert.Contains(t, dec.Reason, "cfg")
		cs := e.sim.Comments(proj, n)
		require.Len(t, cs, 2)
		assert.Contains(t, cs[1].GetBody(), "first mention")
		assert.Empty(t, e.sim.Dispatches(control))
	}
}

// TestFlushRefreshesRateState: a flush whose write went through (guarded
// by the sha it replaced) leaves the cached rate state as fresh as a read,
// so a running dispatcher does not read it again within CacheTTL of the
// flush; one another writer got to first reads and merges, as before.
func TestFlushRefreshesRateState(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher(func(c *Config) { c.RatePerHour = 5 })
	n := e.issue("x")
	handle := func(user string) []string {
		c := e.comment(n, user, "@mrbot task")
		e.sim.ResetRequests()
		dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
		require.NoError(t, err)
		require.Equal(t, Dispatch, dec.Decision, dec.Reason)
		var reads []string
		for _, r := range e.sim.Requests() {
			if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/ratelimit.json") {
				reads = append(reads, r.Path)
			}
		}
		return reads
	}
	assert.Len(t, handle("alice"), 1, "the first mention reads the rate state")
	e.later(DefaultCacheTTL * 2 / 3)
	require.NoError(t, d.Flush(e.ctx()))
	e.later(DefaultCacheTTL * 2 / 3) // past the read's TTL, within the flush's
	assert.Empty(t, handle("bob"), "the flush refreshed it")

	// another dispatcher writes: the next flush conflicts, reads, merges
	other := e.dispatcher(func(c *Config) { c.RatePerHour = 5 })
	c := e.comment(n, "olga", "@mrbot elsewhere")
	_, err := other.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.NoError(t, other.Flush(e.ctx()))
	require.NoError(t, d.Flush(e.ctx()))
	var f rateFile
	_, err = d.rateFile().Read(e.ctx(), &f)
	require.NoError(t, err)
	var logins []string
	for _, r := range f.Runs {
		logins = append(logins, r.Login)
	}
	assert.ElementsMatch(t, []string{"alice", "bob", "olga"}, logins)
	e.later(DefaultCacheTTL * 2 / 3)
	assert.Empty(t, handle("alice"), "the merged flush refreshed it too")
	d.mu.Lock()
	assert.Equal(t, 1, d.rateSt.count("olga", "", d.cfg.Now()), "and it holds the other dispatcher's run")
	d.mu.Unlock()
}

func TestRateLimitRepliesOnce(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher(func(c *Config) { c.RatePerHour = 2 })
	n := e.issue("x")
	var decs []Decision
	for i := 0; i < 3; i++ {
		c := e.comment(n, "alice", fmt.Sprintf("@mrbot task %d", i))
		dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
		require.NoError(t, err)
		decs = append(decs, dec)
	}
	require.NoError(t, d.Flush(e.ctx()))
	assert.Equal(t, []string{Dispatch, Dispatch, Reply}, []string{decs[0].Decision, decs[1].Decision, decs[2].Decision})
	assert.Contains(t, decs[2].Reason, "rate limit")
	assert.Len(t, e.sim.Dispatches(control), 2)

	// The state survives the process: a fresh dispatcher (a new `once` run)
	// still counts alice's two runs, and bob is not affected.
	d2 := e.dispatcher(func(c *Config) { c.RatePerHour = 2 })
	c := e.comment(n, "alice", "@mrbot task 4")
	dec, err := d2.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Reply, dec.Decision)
	c = e.comment(n, "bob", "@mrbot task 5")
	dec, err = d2.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision)

	// The third mention again: no second reply.
	dec, err = d2.Handle(e.ctx(), e.trigger("issue_comment", n, decs[2].Trigger.CommentID))
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	replies := 0
	for _, c := range e.sim.Comments(proj, n) {
		if strings.Contains(c.GetBody(), "kind=ratelimit") {
			replies++
		}
	}
	assert.Equal(t, 2, replies, "one reply per rate-limited mention")
}

func TestGoAwayComeBack(t *testing.T) {
	cases := []struct {
		name, repo, author, perm string
		want                     []string
	}{
		{"collaborator", proj, "bob", "write", []string{"alice/proj", "bob/*"}},
		{"maintainer", proj, "bob", "maintain", []string{"alice/proj", "bob/*"}},
		{"passer-by", proj, "carol", "", []string{"carol/*"}},
		{"owner", proj, "alice", "admin", []string{"alice/*"}},
		{"org admin", "acme/tool", "olga", "", []string{"acme/*", "acme/tool", "olga/*"}},
		{"org member", "acme/tool", "bob", "read", []string{"bob/*"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.perm != "" {
				e.sim.SetPermission(tc.repo, tc.author, tc.perm)
			}
			d := e.dispatcher()
			n, err := e.sim.CreateIssue(tc.repo, "alice", "t", "x")
			require.NoError(t, err)
			c, err := e.sim.Comment(tc.repo, n, tc.author, "@mrbot go away")
			require.NoError(t, err)
			trig := e.repoTrigger(tc.repo, n, c.GetID())
			dec, err := d.Handle(e.ctx(), trig)
			require.NoError(t, err)
			assert.Equal(t, Block, dec.Decision, dec.Reason)
			l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
			require.NoError(t, err)
			var got []string
			for _, en := range l.Entries {
				got = append(got, en.Pattern)
				assert.Equal(t, tc.author, en.By)
				assert.Equal(t, c.GetHTMLURL(), en.Source)
			}
			assert.Equal(t, tc.want, got)
			confirm := e.sim.Comments(tc.repo, n)
			require.Len(t, confirm, 2, "confirmed once")
			assert.Contains(t, confirm[1].GetBody(), "kind=go-away")

			// Seen again: no second confirmation.
			_, err = e.dispatcher().Handle(e.ctx(), e.repoTrigger(tc.repo, n, c.GetID()))
			require.NoError(t, err)
			assert.Len(t, e.sim.Comments(tc.repo, n), 2)

			// Come back by the same person removes exactly those entries.
			c2, err := e.sim.Comment(tc.repo, n, tc.author, "@mrbot come back")
			require.NoError(t, err)
			dec, err = d.Handle(e.ctx(), e.repoTrigger(tc.repo, n, c2.GetID()))
			require.NoError(t, err)
			assert.Equal(t, Unblock, dec.Decision)
			l, err = (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
			require.NoError(t, err)
			assert.Empty(t, l.Entries)
			assert.Empty(t, e.sim.Dispatches(control))
		})
	}
}

func TestPasserByCannotUnblockRepo(t *testing.T) {
	e := newEnv(t)
	e.sim.SetPermission(proj, "bob", "write")
	d := e.dispatcher()
	n := e.issue("x")
	c := e.comment(n, "bob", "@mrbot go away")
	_, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	c = e.comment(n, "carol", "@mrbot come back")
	dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Unblock, dec.Decision)
	l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
	require.NoError(t, err)
	require.Len(t, l.Entries, 2, "carol could only unblock carol/*")
	// And a mention there is now ignored.
	c = e.comment(n, "alice", "@mrbot do it")
	dec, err = d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	assert.Contains(t, dec.Reason, "blocked")
}

func TestDispatchFailureReleasesRef(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher()
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	id := e.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultStatus502, Rate: 1})
	dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.Error(t, err)
	st, err := d.states().Read(e.ctx(), DedupeRef(dec.JobID))
	require.NoError(t, err)
	require.NotNil(t, st)
	assert.Equal(t, StatusReleased, st.Status, "claim released so a later cycle retries")
	assert.Contains(t, e.logs.String(), "claim released so a later cycle retries")
	e.sim.RemoveFault(id)
	// Another dispatcher takes a released claim over at once, no lease to wait.
	dec, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision)
	assert.Len(t, e.sim.Dispatches(control), 1)
	st, err = d.states().Read(e.ctx(), DedupeRef(dec.JobID))
	require.NoError(t, err)
	assert.Equal(t, StatusDispatched, st.Status)
}

func TestTransientDispatchErrorRetried(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	e.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultStatus502, OnCall: 1})
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision)
	assert.Len(t, e.sim.Dispatches(control), 1)
}

func TestEditedBeforeDispatchIgnored(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	trig := e.trigger("issue_comment", n, c.GetID())
	trig.Body = "@mrbot something else" // what the event said differs from GitHub now
	dec, err := e.dispatcher().Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	assert.Contains(t, dec.Reason, "edited")
	assert.Empty(t, e.sim.Dispatches(control))
}

func TestRacingDispatchersDispatchOnce(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	var trigs []*Trigger
	for i := 0; i < 6; i++ {
		c := e.comment(n, "alice", fmt.Sprintf("@mrbot job %d", i))
		trigs = append(trigs, e.trigger("issue_comment", n, c.GetID()))
	}
	ds := []*Dispatcher{e.dispatcher(), e.dispatcher(), e.dispatcher()}
	var wg sync.WaitGroup
	for _, d := range ds {
		for _, tr := range trigs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := d.Handle(e.ctx(), tr)
				var ce *ClaimedError
				if err != nil && !errors.As(err, &ce) {
					t.Errorf("unexpected error: %v", err)
				}
			}()
		}
	}
	wg.Wait()
	// The next cycle finds every mention dispatched, whoever won.
	for _, d := range ds {
		for _, tr := range trigs {
			dec, err := d.Handle(e.ctx(), tr)
			require.NoError(t, err)
			assert.Equal(t, Ignore, dec.Decision)
		}
	}
	perJob := map[string]int{}
	for _, d := range e.sim.Dispatches(control) {
		var p transport.Payload
		require.NoError(t, json.Unmarshal(d.ClientPayload, &p))
		perJob[p.JobID]++
	}
	require.Len(t, perJob, len(trigs))
	for id, k := range perJob {
		assert.Equal(t, 1, k, "job %s", id)
	}
}

// repoTrigger is trigger() for a comment in any repo of the simulator.
func (e *env) repoTrigger(repo string, number int, id int64) *Trigger {
	p := map[string]any{"action": "created", "repository": e.raw("repos/" + repo),
		"issue":   e.raw(fmt.Sprintf("repos/%s/issues/%d", repo, number)),
		"comment": e.raw(fmt.Sprintf("repos/%s/issues/comments/%d", repo, id))}
	b, err := json.Marshal(p)
	require.NoError(e.t, err)
	t, err := DecodeEvent("issue_comment", b)
	require.NoError(e.t, err)
	return t
}

// TestReactsWithEyesOnTrigger: 👀 lands on what carried the mention; a
// review (which takes no reactions) and a body mention land on the issue.
func TestReactsWithEyesOnTrigger(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher()
	n := e.issue("plain issue")
	c := e.comment(n, "alice", "@mrbot look at this")
	body := e.issue("@mrbot fix this issue")
	pr := e.pr("a change", "")
	rc, err := e.sim.AddReviewComment(proj, pr, 0, "alice", "README.md", 1, "@mrbot explain this line")
	require.NoError(t, err)
	rvPR := e.pr("another change", "")
	rv, err := e.sim.AddReview(proj, rvPR, "bob", "COMMENTED", "@mrbot what about this review?")
	require.NoError(t, err)

	issueReactions := func(number int) []string {
		rs, _, err := e.gh.Reactions.ListIssueReactions(e.ctx(), "alice", "proj", number, nil)
		require.NoError(t, err)
		var out []string
		for _, r := range rs {
			out = append(out, r.GetContent())
		}
		return out
	}
	cases := []struct {
		event  string
		number int
		id     int64
		got    func() []string
	}{
		{"issue_comment", n, c.GetID(), func() []string { return e.sim.Reactions(proj, c.GetID()) }},
		{"pull_request_review_comment", pr, rc, func() []string { return e.sim.ReviewCommentReactions(proj, rc) }},
		{"issues", body, 0, func() []string { return issueReactions(body) }},
		{"pull_request_review", rvPR, rv, func() []string { return issueReactions(rvPR) }},
	}
	for _, tc := range cases {
		t.Run(tc.event, func(t *testing.T) {
			dec, err := d.Handle(e.ctx(), e.trigger(tc.event, tc.number, tc.id))
			require.NoError(t, err)
			require.Equal(t, Dispatch, dec.Decision, dec.Reason)
			assert.Equal(t, []string{"eyes"}, tc.got())
		})
	}
	assert.Empty(t, e.sim.Reactions(proj, rc), "a review comment id is not an issue comment")
	assert.NotContains(t, e.logs.String(), "reaction failed")
}

// TestOperatorCeilingsInDecision: the policy a decision reports is bounded
// by the operator's ceilings, as the runner's will be; zero ceilings stay
// zero rather than falling back to the defaults.
func TestOperatorCeilingsInDecision(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	cases := []struct {
		name     string
		ceilings *policy.Ceilings
		cfg      string // the user's !cfg flags, "" = none
		want     policy.Ceilings
	}{
		{"unset means defaults", nil, "", policy.Ceilings{CommentLimit: 3, IssueLimit: 1, PRLimit: 1, MaxWrites: policy.DefaultMaxWrites}},
		{"operator ceilings", &policy.Ceilings{CommentLimit: 5, IssueLimit: 2, PRLimit: 0}, "", policy.Ceilings{CommentLimit: 5, IssueLimit: 2, PRLimit: 0}},
		{"all zero stays zero", &policy.Ceilings{}, "", policy.Ceilings{}},
		{"flags only tighten", &policy.Ceilings{CommentLimit: 5, IssueLimit: 2, PRLimit: 1}, "comment-limit=9 issue-limit=1", policy.Ceilings{CommentLimit: 5, IssueLimit: 1, PRLimit: 1}},
		{"maximum", &policy.Ceilings{CommentLimit: 1000, IssueLimit: 1000, PRLimit: 1000}, "", policy.Ceilings{CommentLimit: 1000, IssueLimit: 1000, PRLimit: 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := "@mrbot do it"
			if tc.cfg != "" {
				body = "@mrbot !cfg " + tc.cfg + "\ndo it"
			}
			c := e.comment(n, "alice", body)
			d := e.dispatcher(func(cfg *Config) { cfg.Ceilings, cfg.DryRun = tc.ceilings, true })
			dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
			require.NoError(t, err)
			require.Equal(t, Dispatch, dec.Decision, dec.Reason)
			require.NotNil(t, dec.Policy)
			assert.Equal(t, tc.want, policy.Ceilings{CommentLimit: dec.Policy.CommentLimit, IssueLimit: dec.Policy.IssueLimit, PRLimit: dec.Policy.PRLimit, MaxWrites: dec.Policy.MaxWrites})
		})
	}

	// The caller's value is copied: changing it later changes nothing.
	ceil := policy.Ceilings{CommentLimit: 2, IssueLimit: 1, PRLimit: 1}
	d := e.dispatcher(func(cfg *Config) { cfg.Ceilings, cfg.DryRun = &ceil, true })
	ceil.CommentLimit = 1000
	c := e.comment(n, "alice", "@mrbot do it")
	dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, 2, dec.Policy.CommentLimit)
}

func TestOperatorCeilingsValidated(t *testing.T) {
	e := newEnv(t)
	for _, bad := range []policy.Ceilings{{CommentLimit: -1}, {IssueLimit: 1001}, {PRLimit: -5}} {
		_, err := New(Config{Bot: bot, Control: control, Ceilings: &bad}, Clients{GitHub: e.gh, Dispatch: e.dsp})
		require.Error(t, err, "%+v", bad)
		assert.Contains(t, err.Error(), "ceilings")
		assert.Contains(t, err.Error(), "0…1000")
	}
}

// A shutdown that arrives while a claimed mention is being sent must not
// leave it claimed but never dispatched: the send runs to its end.
func TestShutdownDuringSendStillDispatches(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it")
	e.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultSlow, Delay: 300 * time.Millisecond, Rate: 1})
	e.sim.OnDispatch(func(string, githubsim.Dispatch) {})
	ctx, cancel := context.WithCancel(e.ctx())
	// Cancel once the dispatch request has left, i.e. while it is in
	// flight. (Not once the claim exists: the claim goes out while the
	// thread is read, so that could cancel the read instead: a make test
	// failure, "fetch …/comments: context canceled".)
	sent := make(chan struct{})
	var once sync.Once
	dsp, err := ghclient.New(ghclient.Options{BaseURL: e.base, Token: botToken, Sleep: noSleep, MaxRetries: 2,
		RetryUnsafe: true, RequestTimeout: 20 * time.Second,
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/dispatches") {
				once.Do(func() { close(sent) })
			}
			return http.DefaultTransport.RoundTrip(r)
		})})
	require.NoError(t, err)
	go func() {
		select {
		case <-sent:
			cancel()
		case <-ctx.Done():
		}
	}()
	d, err := New(e.cfg, Clients{GitHub: e.gh, Dispatch: dsp})
	require.NoError(t, err)
	dec, err := d.Handle(ctx, e.trigger("issue_comment", n, c.GetID()))
	cancel()
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision)
	assert.Len(t, e.sim.Dispatches(control), 1, "the claimed mention was dispatched")
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOptOutRepliesRateLimited: opt-outs are open to anyone, so a stranger
// repeating "go away" must not make the bot reply each time (at most 2 an
// hour). The block itself always applies.
func TestOptOutRepliesRateLimited(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher(func(c *Config) { c.RatePerHour = 2 })
	n := e.issue("x")
	replies := func() int {
		k := 0
		for _, c := range e.sim.Comments(proj, n) {
			if c.GetUser().GetLogin() == bot {
				k++
			}
		}
		return k
	}
	for i := 0; i < 5; i++ {
		cmd := "go away"
		if i%2 == 1 {
			cmd = "come back"
		}
		c := e.comment(n, "carol", "@mrbot "+cmd)
		dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
		require.NoError(t, err)
		assert.Contains(t, []string{Block, Unblock}, dec.Decision, dec.Reason)
		if i >= OptOutRepliesPerHour {
			assert.Contains(t, dec.Reason, "no reply")
		}
	}
	assert.Equal(t, OptOutRepliesPerHour, replies())
	l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
	require.NoError(t, err)
	require.Len(t, l.Entries, 1, "the last go away still blocked")
	assert.Equal(t, "carol/*", l.Entries[0].Pattern)
	// Another user on the same repo has their own budget.
	c := e.comment(n, "bob", "@mrbot go away")
	_, err = d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, OptOutRepliesPerHour+1, replies())
}

// TestOwnerLiftsCollaboratorBlock: a block a collaborator put on a repo
// can be lifted by the repo's owner.
func TestOwnerLiftsCollaboratorBlock(t *testing.T) {
	e := newEnv(t)
	e.sim.SetPermission(proj, "bob", "write")
	d := e.dispatcher()
	n := e.issue("x")
	c := e.comment(n, "bob", "@mrbot go away")
	_, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	c = e.comment(n, "alice", "@mrbot come back")
	dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Unblock, dec.Decision, dec.Reason)
	l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
	require.NoError(t, err)
	var pats []string
	for _, en := range l.Entries {
		pats = append(pats, en.Pattern)
	}
	assert.Equal(t, []string{"bob/*"}, pats, "alice/proj lifted; bob's own account stays blocked")
}

// TestRenamedRepoKeepsBlock: an opt-out entry keeps the repository's
// numeric id, so the same repository under a new name (renamed or
// transferred) is still blocked.
func TestRenamedRepoKeepsBlock(t *testing.T) {
	e := newEnv(t)
	e.sim.SetPermission(proj, "bob", "write")
	d := e.dispatcher()
	n := e.issue("x")
	c := e.comment(n, "bob", "@mrbot go away")
	_, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
	require.NoError(t, err)
	var repoEntry blocklist.Entry
	for _, en := range l.Entries {
		if en.Pattern == proj {
			repoEntry = en
		}
	}
	require.NotZero(t, repoEntry.ID, "the entry keeps the repository id: %+v", l.Entries)

	c = e.comment(n, "alice", "@mrbot do it")
	trig := e.trigger("issue_comment", n, c.GetID())
	trig.Repo = "alice/proj-renamed" // what GitHub reports after a rename; the id is the same
	dec, err := e.dispatcher().Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	assert.Contains(t, dec.Reason, "renamed")
	assert.Empty(t, e.sim.Dispatches(control))
}

// A mention in a private repository while the control repository is public
// gets one reply saying why and no run, unless the operator allows it.
func TestPrivateTargetPublicControl(t *testing.T) {
	for _, tc := range []struct {
		name  string
		allow bool
		want  string
	}{
		{"refused by default", false, Reply},
		{"the operator allows it", true, Dispatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			n := e.issue("x")
			c := e.comment(n, "alice", "@mrbot please look")
			trig := e.trigger("issue_comment", n, c.GetID())
			trig.RepoPrivate = true
			d := e.dispatcher(func(c *Config) { c.AllowPrivateTargets = tc.allow })
			dec, err := d.Handle(e.ctx(), trig)
			require.NoError(t, err)
			assert.Equal(t, tc.want, dec.Decision, dec.Reason)
			if tc.allow {
				assert.NotEmpty(t, e.sim.Dispatches(control))
				return
			}
			assert.Empty(t, e.sim.Dispatches(control), "no run")
			cs := e.sim.Comments(proj, n)
			require.Len(t, cs, 2)
			assert.Contains(t, cs[1].GetBody(), "this repository is private")
			assert.Contains(t, cs[1].GetBody(), marker(contract.ReplyPrivate, trig))
			// seen again: no second reply
			_, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
			require.NoError(t, err)
			assert.Len(t, e.sim.Comments(proj, n), 2, "exactly one reply")
		})
	}
}
